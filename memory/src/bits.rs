//! Bit sets over event numbers, and matrices of them: the representation of every relation.
//!
//! A relation over `n` events is a [`Matrix`] of `n` rows, row `a` holding the set of `b` with
//! `(a, b)` in the relation, one bit per event. Union is a word-wise OR, "does this row meet
//! that set" a word-wise AND, and composition and transitive closure OR whole rows together,
//! 64 events per instruction: a few hundred events make rows of a handful of words.
//!
//! All rows of a matrix have the same number of words (its *stride*), so the matrix is one
//! allocation and cloning it (the runtime forks executions) is one copy. Adding columns past
//! the stride doubles it and lays the rows out again.

/// How many 64-bit words hold `bits` bits.
pub(crate) const fn words_for(bits: usize) -> usize {
    bits.div_ceil(64)
}

/// Whether bit `i` of `set` is set (bits past the end are clear).
pub(crate) fn contains(set: &[u64], i: usize) -> bool {
    set.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 == 1)
}

/// Sets bit `i` of `set`.
pub(crate) fn insert(set: &mut [u64], i: usize) {
    set[i / 64] |= 1 << (i % 64);
}

/// Clears bit `i` of `set`.
pub(crate) fn remove(set: &mut [u64], i: usize) {
    set[i / 64] &= !(1 << (i % 64));
}

/// `dst |= src`, over the words both have.
pub(crate) fn union_into(dst: &mut [u64], src: &[u64]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d |= s;
    }
}

/// Whether the two sets have a bit in common.
pub(crate) fn intersects(a: &[u64], b: &[u64]) -> bool {
    a.iter().zip(b).any(|(x, y)| x & y != 0)
}

/// The set bits of `set`, in increasing order.
pub(crate) fn ones(set: &[u64]) -> impl Iterator<Item = usize> + '_ {
    set.iter().enumerate().flat_map(|(w, &word)| {
        let mut rest = word;
        std::iter::from_fn(move || {
            if rest == 0 {
                return None;
            }
            let bit = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            Some(w * 64 + bit)
        })
    })
}

/// Rows of bit sets of equal width, in one allocation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Matrix {
    /// Words per row.
    stride: usize,
    rows: usize,
    words: Vec<u64>,
}

impl Matrix {
    /// `rows` empty rows wide enough for `columns` bits.
    pub(crate) fn new(rows: usize, columns: usize) -> Matrix {
        let stride = words_for(columns).max(1);
        Matrix {
            stride,
            rows,
            words: vec![0; rows * stride],
        }
    }

    /// Keeps `rows` empty rows and the allocation (and width) of all of them.
    pub(crate) fn clear(&mut self, rows: usize) {
        self.words.clear();
        self.words.resize(rows * self.stride, 0);
        self.rows = rows;
    }

    /// The number of rows.
    pub(crate) fn rows(&self) -> usize {
        self.rows
    }

    /// Makes room for `columns` bits per row: doubles the stride until they fit.
    pub(crate) fn reserve_columns(&mut self, columns: usize) {
        let needed = words_for(columns);
        if needed <= self.stride {
            return;
        }
        let stride = needed.max(2 * self.stride);
        let mut words = vec![0; self.rows * stride];
        for r in 0..self.rows {
            words[r * stride..r * stride + self.stride].copy_from_slice(self.row(r));
        }
        self.stride = stride;
        self.words = words;
    }

    /// Appends an empty row and returns its number.
    pub(crate) fn push_row(&mut self) -> usize {
        self.words.resize(self.words.len() + self.stride, 0);
        self.rows += 1;
        self.rows - 1
    }

    /// Row `r`.
    pub(crate) fn row(&self, r: usize) -> &[u64] {
        &self.words[r * self.stride..(r + 1) * self.stride]
    }

    /// Row `r`, to change.
    pub(crate) fn row_mut(&mut self, r: usize) -> &mut [u64] {
        &mut self.words[r * self.stride..(r + 1) * self.stride]
    }

    /// Whether row `r` holds `c`.
    pub(crate) fn get(&self, r: usize, c: usize) -> bool {
        contains(self.row(r), c)
    }

    /// Puts `c` in row `r`.
    pub(crate) fn set(&mut self, r: usize, c: usize) {
        insert(self.row_mut(r), c);
    }

    /// `row(dst) |= row(src)`, both rows of this matrix.
    pub(crate) fn union_rows(&mut self, dst: usize, src: usize) {
        if dst == src {
            return;
        }
        let s = self.stride;
        // Split the storage so that one row can be read while the other is written.
        let (lo, hi) = self.words.split_at_mut(dst.max(src) * s);
        let (d, r) = if dst < src {
            (&mut lo[dst * s..(dst + 1) * s], &hi[..s])
        } else {
            (&mut hi[..s], &lo[src * s..(src + 1) * s])
        };
        union_into(d, r);
    }

    /// `row(dst) |= set`.
    pub(crate) fn union_row_with(&mut self, dst: usize, set: &[u64]) {
        union_into(self.row_mut(dst), set);
    }
}
