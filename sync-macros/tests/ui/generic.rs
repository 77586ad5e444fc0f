use fgvt_sync::atomic::{AtomicI64, Ordering::SeqCst};

#[derive(Default)]
struct Counter(AtomicI64);

#[fgvt_sync::operations]
impl Counter {
    pub fn add<T: Into<i64>>(&self, n: T) {
        self.0.fetch_add(n.into(), SeqCst);
    }

    // Lifetimes are fine.
    pub fn get<'a>(&'a self) -> i64 {
        self.0.load(SeqCst)
    }
}

fn main() {}
