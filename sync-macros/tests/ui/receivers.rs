use fgvt_sync::atomic::{AtomicI64, Ordering::SeqCst};

#[derive(Default)]
struct Counter(AtomicI64);

#[fgvt_sync::operations]
impl Counter {
    pub fn into_count(self) -> i64 {
        self.0.load(SeqCst)
    }

    pub async fn get(&self) -> i64 {
        self.0.load(SeqCst)
    }

    pub unsafe fn peek(&self) -> i64 {
        self.0.load(SeqCst)
    }
}

#[derive(Clone, Default, PartialEq, Eq, Hash)]
struct SeqCounter(i64);

#[fgvt_sync::sequential]
impl SeqCounter {
    pub fn into_count(self) -> i64 {
        self.0
    }
}

fn main() {}
