use fgvt_sync::atomic::{AtomicI64, Ordering::SeqCst};

#[derive(Default)]
struct Counter(AtomicI64);

#[fgvt_sync::operations]
impl Counter {
    pub fn get(&self) -> i64 {
        self.0.load(SeqCst)
    }

    pub fn reset(&mut self) {
        self.0 = AtomicI64::new(0);
    }
}

fn main() {}
