//! What the process holds in memory, as the kernel counts it, and the budget the machine
//! allows: the probe of a memory budget ([`MemoryBudget`](crate::MemoryBudget)) where nothing
//! counts the allocations.
//!
//! A program that installs a counting allocator (fgvt's binary, `fgvt_sync::main!`) measures
//! what it allocates. A Rust test cannot: its binary's allocator is the user's. There the
//! resident size (`VmRSS`) stands in. It counts what the object's runs allocate and never
//! free too: an object that leaks its nodes leaks them in every run, and every state's steps
//! run it again, so that memory grows with the exploration and the state limit alone does not
//! bound it.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How long a reading of the resident size is used before the next one: the explorer and its
/// workers look at the budget before every state, and reading `/proc` is slow next to that
/// (read every 10 ms, it made two jobs explore the jobs bench's Treiber stack a tenth slower).
/// A process that grows fast may pass its budget by what it allocates in this time.
const SAMPLED_FOR: Duration = Duration::from_millis(100);

/// The resident size in bytes, read at most every [`SAMPLED_FOR`] (0 where the system does not
/// tell: then a budget probed with it never triggers).
pub fn resident() -> usize {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    static READ_AT: AtomicU64 = AtomicU64::new(0);
    static VALUE: AtomicUsize = AtomicUsize::new(0);
    let epoch = *EPOCH.get_or_init(Instant::now);
    // Nanoseconds since the epoch, one more so that 0 means "never read".
    let now = u64::try_from(epoch.elapsed().as_nanos())
        .unwrap_or(u64::MAX)
        .saturating_add(1);
    let read_at = READ_AT.load(Ordering::Relaxed);
    if read_at == 0 || now.saturating_sub(read_at) >= SAMPLED_FOR.as_nanos() as u64 {
        // Two threads may both read: each stores a true reading.
        VALUE.store(read_resident().unwrap_or(0), Ordering::Relaxed);
        READ_AT.store(now, Ordering::Relaxed);
    }
    VALUE.load(Ordering::Relaxed)
}

/// The resident size in bytes now (`VmRSS` of `/proc/self/status`), if the system tells it.
pub fn read_resident() -> Option<usize> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    kib_field(&status, "VmRSS:")
}

/// The default budget: 60 % of the machine's RAM (`MemTotal` of `/proc/meminfo`), or 4 GiB
/// where that cannot be read. The rest is left to the system and to the stages after
/// exploration.
pub fn default_budget() -> usize {
    let total = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| kib_field(&text, "MemTotal:"));
    total.map_or(4 << 30, |bytes| bytes / 10 * 6)
}

/// A field given in kB in a `/proc` text (`MemTotal:  24567890 kB`), in bytes.
fn kib_field(text: &str, name: &str) -> Option<usize> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proc_field_is_read_in_bytes() {
        let text = "MemTotal:       24567890 kB\nMemFree:  1 kB\n";
        assert_eq!(kib_field(text, "MemTotal:"), Some(24567890 * 1024));
        assert_eq!(kib_field(text, "MemFree:"), Some(1024));
        assert_eq!(kib_field("nothing", "MemTotal:"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_resident_size_grows_with_memory_touched() {
        let before = read_resident().expect("Linux tells the resident size");
        let block = vec![1u8; 64 << 20];
        let after = read_resident().expect("Linux tells the resident size");
        assert!(after >= before + (48 << 20), "{before} → {after}");
        assert_eq!(block.iter().map(|&b| b as usize).sum::<usize>(), 64 << 20);
        assert!(resident() > 0);
    }
}
