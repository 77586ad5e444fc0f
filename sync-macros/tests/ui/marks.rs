use fgvt_sync::atomic::{AtomicI64, Ordering::SeqCst};

struct Counter(AtomicI64);

#[fgvt_sync::operations]
impl Counter {
    #[new]
    fn starting_at(n: i64) -> Self {
        Counter(AtomicI64::new(n))
    }

    #[op(name = "get")]
    pub fn read(&self) -> i64 {
        self.0.load(SeqCst)
    }

    pub fn get(&self) -> i64 {
        self.0.load(SeqCst)
    }

    #[op(name = "not a name")]
    pub fn spaced(&self) {}

    #[op(title = "x")]
    pub fn titled(&self) {}

    #[op]
    fn helper() {}

    #[skip]
    #[op]
    pub fn both(&self) {}
}

#[derive(Default)]
struct Empty;

#[fgvt_sync::operations]
impl Empty {
    fn private(&self) {}
}

#[fgvt_sync::operations]
impl Default for Counter {
    fn default() -> Self {
        Counter(AtomicI64::new(0))
    }
}

fn main() {}
