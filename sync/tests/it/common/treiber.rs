//! A Treiber stack for the weak-memory tests of the reduced search (`reduced_weak.rs`) and of
//! loops without fgvt's hint (`implied.rs`): its orderings and its spin hint are parameters.

use std::ptr;

use fgvt_sync::atomic::{AtomicPtr, Ordering};
use fgvt_sync::cell::UnsafeCell;

/// A Treiber stack node, published by the push's compare-and-swap.
struct Node {
    item: UnsafeCell<i64>,
    next: UnsafeCell<*mut Node>,
}

/// A Treiber stack whose loads of the top use `LOAD`, and whose compare-and-swaps use
/// `SUCCESS` and `FAILURE` (0 `Relaxed`, 1 `Acquire`, 2 `Release`, 3 `AcqRel`); its retry
/// loops call fgvt's spin hint, or with `HINTED` false `std`'s, which fgvt cannot see.
pub struct Treiber<const LOAD: u8, const SUCCESS: u8, const FAILURE: u8, const HINTED: bool> {
    top: AtomicPtr<Node>,
}

/// The orderings Rust code declares: `Acquire` loads, `AcqRel` compare-and-swaps that fail
/// `Acquire`.
pub type Idiomatic<const HINTED: bool> = Treiber<1, 3, 1, HINTED>;

// SAFETY: nodes are shared by pointer; the tests check plain accesses for data races.
unsafe impl<const L: u8, const S: u8, const F: u8, const H: bool> Sync for Treiber<L, S, F, H> {}

fn order(code: u8) -> Ordering {
    match code {
        0 => Ordering::Relaxed,
        1 => Ordering::Acquire,
        2 => Ordering::Release,
        _ => Ordering::AcqRel,
    }
}

/// One turn's spin hint: fgvt's, or `std`'s, which fgvt cannot see.
pub fn hint<const HINTED: bool>() {
    if HINTED {
        fgvt_sync::hint::spin_loop();
    } else {
        std::hint::spin_loop();
    }
}

#[fgvt_sync::operations]
impl<const LOAD: u8, const SUCCESS: u8, const FAILURE: u8, const HINTED: bool>
    Treiber<LOAD, SUCCESS, FAILURE, HINTED>
{
    fn new() -> Self {
        Treiber {
            top: AtomicPtr::new(ptr::null_mut()),
        }
    }

    pub fn push(&self, v: i64) {
        // Never freed: no reuse, no ABA.
        let n = Box::leak(Box::new(Node {
            item: UnsafeCell::new(v),
            next: UnsafeCell::new(ptr::null_mut()),
        }));
        loop {
            let top = self.top.load(order(LOAD));
            // SAFETY: the node is not published yet.
            n.next.with_mut(|p| unsafe { *p = top });
            let cas = self
                .top
                .compare_exchange(top, n, order(SUCCESS), order(FAILURE));
            if cas.is_ok() {
                return;
            }
            hint::<HINTED>();
        }
    }

    pub fn pop(&self) -> Option<i64> {
        loop {
            let top = self.top.load(order(LOAD));
            if top.is_null() {
                return None;
            }
            // SAFETY: nodes are never freed.
            let node = unsafe { &*top };
            let next = node.next.with(|p| unsafe { *p });
            let cas = self
                .top
                .compare_exchange(top, next, order(SUCCESS), order(FAILURE));
            if cas.is_ok() {
                return Some(node.item.with(|p| unsafe { *p }));
            }
            hint::<HINTED>();
        }
    }
}
