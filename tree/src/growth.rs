//! How the explorer's large tables grow: by half, not by double.
//!
//! A `Vec` doubles when it is full, so a table just past a power of two holds almost twice
//! the room it uses; the explorer's tables (the states, the graph's nodes and edges) are most
//! of its memory, and the memory budget counts what is allocated. Growing by half keeps the
//! unused room under a third of the table, at the price of a few more copies while it grows
//! (amortized, each entry is still moved a bounded number of times; and a large block is
//! usually grown in place by the allocator, without a copy).

/// Makes room in `vec` for `additional` more items: when there is not enough, a half of its
/// length more (or `additional`, if that is more).
pub(crate) fn reserve<T>(vec: &mut Vec<T>, additional: usize) {
    if vec.capacity() - vec.len() < additional {
        vec.reserve_exact(additional.max(vec.len() / 2).max(16));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_table_grows_by_half_and_never_runs_short() {
        let mut vec: Vec<u64> = Vec::new();
        for i in 0..100_000u64 {
            reserve(&mut vec, 1);
            assert!(vec.capacity() > vec.len(), "room for the next item");
            vec.push(i);
            // Unused room stays within half the length (plus the first allocation's).
            assert!(vec.capacity() <= vec.len() + vec.len() / 2 + 16);
        }
        let mut vec: Vec<u8> = vec![0; 10];
        reserve(&mut vec, 1_000);
        assert!(vec.capacity() >= 1_010, "a large request is met whole");
    }
}
