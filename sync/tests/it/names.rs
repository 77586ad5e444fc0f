//! Reports name an object after the field or variable the code creates it for, so that a race
//! reads `T1 read head#0`, not `AtomicI64#0`.

use fgvt_sync::atomic::{AtomicI64, Ordering::SeqCst};
use fgvt_sync::{unknown, Call, IntoValue, Mutex, Object, Shared, Test, Value};

/// A counter with a named atomic, a lock, a cell and an atomic named by hand.
struct Named {
    hits: AtomicI64,
    guard: Mutex<()>,
    note: Shared<i64>,
    cells: [AtomicI64; 1],
}

impl Object for Named {
    fn new() -> Self {
        let note = Shared::new(0);
        Named {
            hits: AtomicI64::new(0),
            guard: Mutex::new(()),
            note,
            cells: [AtomicI64::new(0).named("cells[0]")],
        }
    }

    fn call(&self, call: &Call) -> Result<Value, String> {
        match call.op.as_str() {
            "touch" => {
                let _held = self.guard.lock().unwrap();
                self.note.set(self.hits.fetch_add(1, SeqCst));
                self.cells[0].store(1, SeqCst);
                Ok(().into_value())
            }
            _ => Err(unknown(call)),
        }
    }
}

#[test]
fn objects_are_named_after_their_fields_and_variables() {
    let tree = Test::<Named>::new("names")
        .thread(&["touch()"])
        .explore()
        .unwrap();
    let (events, _) = tree.nth_leaf(0).expect("one leaf");
    let names: Vec<&str> = events
        .iter()
        .map(|event| event.location.as_str())
        .filter(|l| !l.is_empty())
        .collect();
    // Numbered in the order they are made: note (its `let` runs first), hits, guard, cells.
    assert_eq!(
        names,
        ["guard#2", "hits#1", "note#0", "cells[0]#3", "guard#2"],
        "{names:?}"
    );
    // What each step read or wrote, made into text only for the steps that became events: an
    // atomic's from its bits, a cell's with `Debug`.
    let values: Vec<&str> = events.iter().map(|e| e.value.as_str()).collect();
    assert_eq!(
        values,
        ["", "0 → 1 (fetch_add 1)", "0", "1", ""],
        "{values:?}"
    );
}
