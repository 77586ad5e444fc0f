use fgvt_sync::atomic::{AtomicI64, Ordering::SeqCst};

#[derive(Default)]
struct Log(AtomicI64);

#[fgvt_sync::operations]
impl Log {
    pub fn append(&self, line: String) {
        self.0.fetch_add(line.len() as i64, SeqCst);
    }

    pub fn add_all(&self, items: &[i64]) {
        self.0.fetch_add(items.iter().sum(), SeqCst);
    }

    pub fn maybe(&self, item: Option<f64>) {
        self.0.fetch_add(item.map_or(0, |f| f as i64), SeqCst);
    }
}

fn main() {}
