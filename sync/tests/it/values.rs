//! Values as the object computes them (issue 26): every integer width exact in histories,
//! reports and arguments, `usize::MAX` included.

use fgvt_sync::atomic::{AtomicU64, AtomicUsize, Ordering::SeqCst};
use fgvt_sync::{unknown, Arg, Call, IntoValue, Object, Test, Value};

/// A register of a `usize` that starts at `usize::MAX`, and a `u64` one set from arguments.
struct Wide {
    word: AtomicUsize,
    big: AtomicU64,
}

impl Object for Wide {
    fn new() -> Self {
        Wide {
            word: AtomicUsize::new(usize::MAX),
            big: AtomicU64::new(0),
        }
    }

    fn call(&self, call: &Call) -> Result<Value, String> {
        match (call.op.as_str(), call.args.as_slice()) {
            ("word", []) => Ok(self.word.load(SeqCst).into_value()),
            ("set", [v]) => {
                self.big.store(v.uint()?, SeqCst);
                Ok(().into_value())
            }
            ("big", []) => Ok(self.big.load(SeqCst).into_value()),
            ("neg", []) => Ok((i64::MIN, -1i8, u8::MAX).into_value()),
            _ => Err(unknown(call)),
        }
    }
}

#[test]
fn results_of_every_width_are_exact() {
    let found = Test::<Wide>::new("wide")
        .thread(&["word()", "set(18446744073709551615)"])
        .thread(&["big()", "neg()"])
        .localize()
        .unwrap();
    let results: Vec<String> = found
        .tree
        .leaves()
        .map(|(_, leaf, _)| leaf.history.to_string())
        .collect();
    let all = results.join("\n");
    assert!(all.contains("ret 18446744073709551615"), "{all}");
    assert!(all.contains("(-9223372036854775808, -1, 255)"), "{all}");
    // Before and after the set: both values of `big()`.
    assert!(
        all.contains("T1:ret 0") && all.contains("T1:ret 18446744073709551615"),
        "{all}"
    );
    assert_eq!(
        found.report.verdict,
        fgvt_sync::report::Verdict::Linearizable
    );
}

#[test]
fn arguments_are_read_at_their_width() {
    let v = Value::Nat(u64::MAX);
    assert_eq!(v.uint(), Ok(u64::MAX));
    assert!(v.int().unwrap_err().contains("at most 9223372036854775807"));
    assert!(Value::Int(-1).uint().unwrap_err().contains("non-negative"));
    assert_eq!(Value::Int(7).index(), Ok(7));
}
