//! How much memory fgvt uses, for the `--max-memory` budget: a counting global allocator and
//! the default budget from the machine's RAM.
//!
//! The binary installs [`Counting`] as its global allocator (a program may count another
//! allocator with [`CountingOn`]); [`allocated`] then reads the
//! bytes in use. Anywhere the allocator is not installed (a library user, a test), it reads 0
//! and the budget never triggers.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicIsize, Ordering};

/// Bytes in use, as flushed by the threads (each keeps up to [`FLUSH`] bytes to itself).
static IN_USE: AtomicIsize = AtomicIsize::new(0);

/// How far a thread's own count may drift before it is added to [`IN_USE`]: an atomic add on
/// every allocation cost a tenth of a checker run; the budget does not need byte precision.
const FLUSH: isize = 1 << 16;

thread_local! {
    /// This thread's change in bytes not yet added to [`IN_USE`] (no destructor, no allocation:
    /// safe to touch from the allocator).
    static PENDING: Cell<isize> = const { Cell::new(0) };
}

/// Counts `delta` bytes allocated (negative: freed).
#[inline]
fn note(delta: isize) {
    let kept = PENDING.try_with(|pending| {
        let now = pending.get() + delta;
        if now.abs() >= FLUSH {
            IN_USE.fetch_add(now, Ordering::Relaxed);
            pending.set(0);
        } else {
            pending.set(now);
        }
    });
    if kept.is_err() {
        // The thread is exiting and its local count is gone: count straight away.
        IN_USE.fetch_add(delta, Ordering::Relaxed);
    }
}

/// Allocator `A`, counting the bytes it hands out: a global allocator whose bytes in use
/// [`allocated`] reads. The binary counts the system's ([`Counting`]); `fgvt_sync::main!`
/// counts `fgvt_sync::Allocator`.
pub struct CountingOn<A>(pub A);

/// The system allocator, counting the bytes it hands out: the binary's global allocator
/// (`static ALLOCATOR: Counting = Counting;`).
pub type Counting = CountingOn<System>;

/// The value of [`Counting`], named like it as a unit struct's value would be.
#[allow(non_upper_case_globals)]
pub const Counting: Counting = CountingOn(System);

// SAFETY: every method forwards to `A` unchanged; the counter is only arithmetic, and the
// huge-page advice changes no contents.
unsafe impl<A: GlobalAlloc> GlobalAlloc for CountingOn<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = self.0.alloc(layout);
        if !p.is_null() {
            note(layout.size() as isize);
            advise_huge(p, layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = self.0.alloc_zeroed(layout);
        if !p.is_null() {
            note(layout.size() as isize);
            advise_huge(p, layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        self.0.dealloc(ptr, layout);
        note(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = self.0.realloc(ptr, layout, new_size);
        if !p.is_null() {
            note(new_size as isize - layout.size() as isize);
            advise_huge(p, new_size);
        }
        p
    }
}

/// Blocks at least this large are backed by huge pages where the kernel has them.
const HUGE_BLOCK: usize = 4 << 20;

/// Asks the kernel to back the block at `p` of `size` bytes with transparent huge pages when
/// it is large: the explorer's tables (states, graph, counts) are looked up at random, and
/// with 4 KiB pages nearly every lookup in them also misses the TLB, and every page is a
/// fault of its own when first touched. A hint: where it is refused, nothing changes.
#[inline]
fn advise_huge(p: *mut u8, size: usize) {
    #[cfg(target_os = "linux")]
    if size >= HUGE_BLOCK {
        // Whole pages of the block (the kernel backs with a huge page only the 2 MiB-aligned
        // stretches the advice covers wholly).
        const PAGE: usize = 4096;
        let start = p as usize & !(PAGE - 1);
        let end = (p as usize + size + PAGE - 1) & !(PAGE - 1);
        // SAFETY: the range holds the live block just allocated (and the rest of its first and
        // last pages, ours too); MADV_HUGEPAGE changes no contents and only hints.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (p, size);
}

/// Bytes allocated and not yet freed, to within 64 KiB per thread (0 unless
/// [`Counting`] or a [`CountingOn`] is the global allocator).
pub fn allocated() -> usize {
    IN_USE.load(Ordering::Relaxed).max(0) as usize
}

/// The default budget: 60 % of the machine's RAM, or 4 GiB where that cannot be read.
pub use fgvt_tree::resident::default_budget;

/// Parses a size like `512M`, `4G`, `4GiB`, `1500000000` (bytes) for `--max-memory`.
pub fn parse_size(text: &str) -> Result<usize, String> {
    let t = text.trim();
    let digits = t
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(digits);
    let number: f64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a size (write e.g. 512M or 4G)"))?;
    let scale: f64 = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 1.0,
        "K" | "KB" | "KIB" => 1024.0,
        "M" | "MB" | "MIB" => 1024.0 * 1024.0,
        "G" | "GB" | "GIB" => 1024.0 * 1024.0 * 1024.0,
        "T" | "TB" | "TIB" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        other => return Err(format!("unknown size unit `{other}` (use K, M, G or T)")),
    };
    let bytes = number * scale;
    if !bytes.is_finite() || bytes < 1.0 || bytes > usize::MAX as f64 {
        return Err(format!("`{text}` is not a usable memory size"));
    }
    Ok(bytes as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_units() {
        assert_eq!(parse_size("1500"), Ok(1500));
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("4G"), Ok(4 << 30));
        assert_eq!(parse_size("4GiB"), Ok(4 << 30));
        assert_eq!(parse_size("1.5k"), Ok(1536));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("4X").is_err());
        assert!(parse_size("0").is_err());
    }
}
