//! What `#[fgvt_sync::operations]` and `#[fgvt_sync::sequential]` generate: dispatch by name
//! and arity, arguments of every supported type, results, the errors for a mistaken call, and
//! the same tree as a hand-written `impl Object`.

use fgvt_sync::atomic::{AtomicI64, Ordering::SeqCst};
use fgvt_sync::{Arg, Call, Object, Sequential, Test, Value};

use crate::common::two_increments as localize;

/// The call a test writes.
fn call(text: &str) -> Call {
    fgvt_tree::parse_call(text).unwrap()
}

/// Runs `text` on a fresh `O`.
fn run<O: Object>(text: &str) -> Result<Value, String> {
    O::new().call(&call(text))
}

/// A counter that loses updates, by attribute.
struct Counter(AtomicI64);

#[fgvt_sync::operations]
impl Counter {
    fn new() -> Self {
        Counter(AtomicI64::new(0))
    }

    pub fn inc(&self) {
        let v = self.0.load(SeqCst);
        self.0.store(v + 1, SeqCst);
    }

    pub fn get(&self) -> i64 {
        self.0.load(SeqCst)
    }
}

/// The same counter, dispatched by hand.
use crate::common::LossyCounter as HandCounter;

#[test]
fn the_attribute_explores_the_tree_a_hand_written_dispatch_does() {
    let by_attribute = localize::<Counter>();
    let by_hand = localize::<HandCounter>();
    assert_eq!(by_attribute.verdict, fgvt_sync::Verdict::NotLinearizable);
    assert_eq!(by_attribute.tree.nodes, by_hand.tree.nodes);
    assert_eq!(by_attribute.tree.leaves, by_hand.tree.leaves);
    assert_eq!((by_attribute.tree.nodes, by_attribute.tree.leaves), (19, 6));
    let patterns = |r: &fgvt_sync::LocalizeReport| {
        r.cdrs.iter().map(|c| c.pattern.clone()).collect::<Vec<_>>()
    };
    assert_eq!(patterns(&by_attribute), patterns(&by_hand));
}

/// Every kind of argument, echoed back.
#[derive(Default)]
struct Echo;

#[fgvt_sync::operations]
impl Echo {
    pub fn i8(&self, n: i8) -> i8 {
        n
    }
    pub fn i16(&self, n: i16) -> i16 {
        n
    }
    pub fn i32(&self, n: i32) -> i32 {
        n
    }
    pub fn i64(&self, n: i64) -> i64 {
        n
    }
    pub fn isize(&self, n: isize) -> isize {
        n
    }
    pub fn u8(&self, n: u8) -> u8 {
        n
    }
    pub fn u16(&self, n: u16) -> u16 {
        n
    }
    pub fn u32(&self, n: u32) -> u32 {
        n
    }
    pub fn u64(&self, n: u64) -> u64 {
        n
    }
    pub fn usize(&self, n: usize) -> usize {
        n
    }
    /// 128-bit arguments are read exactly; their results are not values, so this says how
    /// far the argument is from zero.
    pub fn i128(&self, n: i128) -> bool {
        n < 0
    }
    pub fn u128(&self, n: u128) -> u64 {
        (n / 2) as u64
    }
    pub fn not(&self, b: bool) -> bool {
        !b
    }
    pub fn swap(&self, pair: (i64, bool)) -> (bool, i64) {
        (pair.1, pair.0)
    }
    pub fn nested(&self, (a, (b, c)): (u8, (i32, bool))) -> (i64, i64, bool) {
        (i64::from(a), i64::from(b), c)
    }
    pub fn maybe(&self, n: Option<u8>) -> Option<u8> {
        n.map(|n| n + 1)
    }
    pub fn raw(&self, v: fgvt_sync::Value) -> Value {
        v
    }
    pub fn unit(&self, _unit: ()) -> bool {
        true
    }
}

#[test]
fn arguments_of_every_supported_type_are_read() {
    let cases = [
        ("i8(-128)", Ok(Value::Int(-128))),
        ("i16(-300)", Ok(Value::Int(-300))),
        ("i32(70000)", Ok(Value::Int(70000))),
        ("i64(-9223372036854775808)", Ok(Value::Int(i64::MIN))),
        ("isize(-1)", Ok(Value::Int(-1))),
        ("u8(255)", Ok(Value::Int(255))),
        ("u16(65535)", Ok(Value::Int(65535))),
        ("u32(4294967295)", Ok(Value::Int(4294967295))),
        ("u64(18446744073709551615)", Ok(Value::Nat(u64::MAX))),
        ("usize(18446744073709551615)", Ok(Value::Nat(u64::MAX))),
        ("i128(18446744073709551615)", Ok(Value::Bool(false))),
        ("i128(-1)", Ok(Value::Bool(true))),
        ("u128(18446744073709551615)", Ok(Value::Int(i64::MAX))),
        ("not(true)", Ok(Value::Bool(false))),
        (
            "swap((1, true))",
            Ok(Value::Tuple(vec![Value::Bool(true), Value::Int(1)])),
        ),
        (
            "nested((1, (-2, true)))",
            Ok(Value::Tuple(vec![
                Value::Int(1),
                Value::Int(-2),
                Value::Bool(true),
            ])),
        ),
        ("maybe(null)", Ok(Value::Null)),
        ("maybe(1)", Ok(Value::Int(2))),
        ("raw(\"x\")", Ok(Value::Str("x".into()))),
        ("unit(())", Ok(Value::Bool(true))),
    ];
    for (text, expected) in cases {
        assert_eq!(run::<Echo>(text), expected, "{text}");
    }
}

#[test]
fn an_argument_of_the_wrong_type_or_range_is_the_conversions_error() {
    let cases = [
        ("i8(128)", "expected an integer from -128 to 127, got 128"),
        ("u8(-1)", "expected a non-negative integer, got -1"),
        ("u8(256)", "expected an integer from 0 to 255, got 256"),
        ("i32(true)", "expected an integer, got true"),
        (
            "i64(9223372036854775808)",
            "expected an integer of at most 9223372036854775807, got 9223372036854775808",
        ),
        ("not(1)", "expected true or false, got 1"),
        ("swap(1)", "expected a tuple of 2 values, got 1"),
        (
            "swap((1, 2, 3))",
            "expected a tuple of 2 values, got (1, 2, 3)",
        ),
        ("swap((1, 2))", "expected true or false, got 2"),
        ("nested((1, (2, 3)))", "expected true or false, got 3"),
        ("maybe(300)", "expected an integer from 0 to 255, got 300"),
    ];
    for (text, expected) in cases {
        assert_eq!(run::<Echo>(text), Err(expected.to_string()), "{text}");
    }
}

/// Names, skips, overloads by arity, private operations and `Result`s.
#[derive(Default)]
struct Named {
    n: AtomicI64,
}

#[fgvt_sync::operations]
impl Named {
    /// `poll()` in tests.
    #[op(name = "poll")]
    pub fn take(&self) -> i64 {
        self.n.swap(0, SeqCst)
    }

    /// Not an operation.
    #[skip]
    pub fn reset(&self) {
        self.n.store(0, SeqCst);
    }

    /// Private, but an operation.
    #[op]
    fn put(&self, v: i64) {
        self.n.store(v, SeqCst);
    }

    /// `put(a, b)` beside `put(v)`.
    #[op(name = "put")]
    fn put_sum(&self, a: i64, b: i64) {
        self.n.store(a + b, SeqCst);
    }

    /// A private helper, not an operation.
    #[allow(dead_code)]
    fn helper(&self) -> i64 {
        1
    }

    /// Fails unless the value is positive.
    pub fn positive(&self) -> Result<i64, String> {
        let n = self.n.load(SeqCst);
        if n > 0 {
            Ok(n)
        } else {
            Err(format!("{n} is not positive"))
        }
    }

    /// A `Result` of `()`.
    pub fn check(&self, ok: bool) -> std::io::Result<()> {
        if ok {
            Ok(())
        } else {
            Err(std::io::ErrorKind::NotFound.into())
        }
    }

    /// Compiled out: no arm calls it.
    #[cfg(any())]
    pub fn absent(&self) {}

    /// A raw identifier: `type()` in tests.
    pub fn r#type(&self) -> bool {
        true
    }
}

#[test]
fn names_skips_arities_and_results() {
    let named = Named::new();
    let run = |text: &str| named.call(&call(text));
    assert_eq!(run("put(3)"), Ok(Value::Unit));
    assert_eq!(run("poll()"), Ok(Value::Int(3)));
    assert_eq!(run("put(3, 4)"), Ok(Value::Unit));
    assert_eq!(run("positive()"), Ok(Value::Int(7)));
    assert_eq!(run("poll()"), Ok(Value::Int(7)));
    assert_eq!(
        run("positive()"),
        Ok(Value::Str("Err(\"0 is not positive\")".into()))
    );
    assert_eq!(run("check(true)"), Ok(Value::Unit));
    assert_eq!(
        run("check(false)"),
        Ok(Value::Str("Err(Kind(NotFound))".into()))
    );
    assert_eq!(run("type()"), Ok(Value::Bool(true)));
    for skipped in ["reset()", "take()", "helper()", "absent()"] {
        let error = run(skipped).unwrap_err();
        assert!(error.starts_with("unknown operation: "), "{error}");
    }
    named.reset();
    assert_eq!(named.helper(), 1);
}

#[test]
fn a_mistaken_call_is_unknowns_error_with_the_likely_operation() {
    let named = Named::new();
    let run = |text: &str| named.call(&call(text)).unwrap_err();
    assert_eq!(
        run("pol()"),
        "unknown operation: the object's `Object::call` has no arm for `pol` with 0 arguments; \
         did you mean `poll()`?"
    );
    // The same arity wins a tie.
    assert_eq!(
        run("pot(1)"),
        "unknown operation: the object's `Object::call` has no arm for `pot` with 1 argument; \
         did you mean `put(v)`?"
    );
    assert_eq!(
        run("put()"),
        "unknown operation: the object's `Object::call` has no arm for `put` with 0 arguments; \
         the object has `put(v)` and `put(a, b)`"
    );
    assert_eq!(
        run("poll(1)"),
        "unknown operation: the object's `Object::call` has no arm for `poll` with 1 argument; \
         the object has `poll()`"
    );
    // Nothing close: the plain error.
    assert_eq!(
        run("frobnicate()"),
        "unknown operation: the object's `Object::call` has no arm for `frobnicate` with 0 \
         arguments"
    );
}

#[test]
#[should_panic(
    expected = "threads[1][0], `gett()`: unknown operation: the object's `Object::call` has no arm for `gett` with 0 arguments; did you mean `get()`?"
)]
fn a_test_with_a_mistaken_call_panics_naming_it() {
    let _ = Test::<Counter>::new("typo")
        .thread(&["inc()"])
        .thread(&["gett()"])
        .localize();
}

/// A `#[new]` constructor of another name, and a generic impl block.
struct Cell<T> {
    value: AtomicI64,
    _marker: std::marker::PhantomData<fn() -> T>,
}

/// Where a cell starts.
trait Start: 'static {
    const START: i64;
}

struct Seven;

impl Start for Seven {
    const START: i64 = 7;
}

#[fgvt_sync::operations(crate = fgvt_sync)]
impl<T: Start> Cell<T> {
    #[new]
    fn started() -> Self {
        Cell {
            value: AtomicI64::new(T::START),
            _marker: std::marker::PhantomData,
        }
    }

    /// Not the constructor: `#[new]` is.
    #[allow(dead_code)]
    fn new() -> Self {
        Cell {
            value: AtomicI64::new(0),
            _marker: std::marker::PhantomData,
        }
    }

    pub fn read(&self) -> i64 {
        self.value.load(SeqCst)
    }
}

#[test]
fn the_marked_constructor_makes_the_object_of_a_generic_impl() {
    assert_eq!(run::<Cell<Seven>>("read()"), Ok(Value::Int(7)));
}

/// A sequential counter, by attribute.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
struct SeqCounter(i64);

#[fgvt_sync::sequential]
impl SeqCounter {
    pub fn inc(&mut self) {
        self.0 += 1;
    }

    pub fn get(&self) -> i64 {
        self.0
    }
}

#[test]
fn a_sequential_spec_by_attribute_steps_one_call_at_a_time() {
    let mut spec = <SeqCounter as Sequential>::new();
    assert_eq!(spec.call(&call("inc()")), Ok(Value::Unit));
    assert_eq!(spec.call(&call("inc()")), Ok(Value::Unit));
    assert_eq!(spec.call(&call("get()")), Ok(Value::Int(2)));
    assert_eq!(
        spec.call(&call("inc(1)")),
        Err(
            "unknown operation: the object's `Object::call` has no arm for `inc` with 1 \
             argument; the object has `inc()`"
                .to_string()
        )
    );
    let report = Test::<Counter>::new("counter")
        .thread(&["inc()"])
        .thread(&["inc()"])
        .finally(&["get()"])
        .spec_type::<SeqCounter>()
        .localize()
        .unwrap()
        .report;
    assert_eq!(report.verdict, fgvt_sync::Verdict::NotLinearizable);
    assert_eq!(report.test.spec, "SeqCounter");
}

/// `Arg` stays usable beside the attribute, for a hand-written dispatch.
#[test]
fn arg_is_still_there_for_hand_written_dispatch() {
    assert_eq!(Value::Int(3).int(), Ok(3));
}

/// A counter's interface as a trait, in a module of its own: the attribute on the impl calls
/// through the trait, which is not in scope where the test runs.
mod interface {
    /// What a counter does.
    pub trait Counting {
        /// A fresh counter.
        fn fresh() -> Self
        where
            Self: Sized;
        fn inc(&self);
        fn get(&self) -> i64;
        /// Not an operation: it takes no `self`.
        fn start() -> i64 {
            0
        }
    }
}

/// The lossy counter again, its operations those of a trait (issue 42).
struct TraitCounter(AtomicI64);

impl TraitCounter {
    /// An inherent method with an operation's name: the trait's is the one a test calls.
    #[allow(dead_code)]
    fn get(&self) -> i64 {
        -1
    }
}

#[fgvt_sync::operations]
impl interface::Counting for TraitCounter {
    #[new]
    fn fresh() -> Self {
        TraitCounter(AtomicI64::new(<Self as interface::Counting>::start()))
    }

    fn inc(&self) {
        let v = self.0.load(SeqCst);
        self.0.store(v + 1, SeqCst);
    }

    fn get(&self) -> i64 {
        self.0.load(SeqCst)
    }
}

#[test]
fn the_operations_of_a_trait_impl_are_its_methods_called_through_the_trait() {
    let counter = <TraitCounter as Object>::new();
    assert_eq!(counter.call(&call("inc()")), Ok(Value::Unit));
    assert_eq!(counter.call(&call("get()")), Ok(Value::Int(1)));
    let typo = counter.call(&call("start()")).unwrap_err();
    assert!(typo.contains("`start`"), "not an operation: {typo}");
    let (by_trait, by_hand) = (localize::<TraitCounter>(), localize::<HandCounter>());
    assert_eq!(by_trait.verdict, fgvt_sync::Verdict::NotLinearizable);
    assert_eq!(
        (by_trait.tree.nodes, by_trait.tree.leaves),
        (by_hand.tree.nodes, by_hand.tree.leaves)
    );
}

/// Issue 42: results that are handles to data (a lock's guard, an `Arc`, a `Box`, a reference)
/// show the data; a guard is released as its operation returns.
struct Handles {
    total: fgvt_sync::Mutex<i64>,
    pair: fgvt_sync::RwLock<(i64, bool)>,
    shared: std::sync::Arc<i64>,
}

#[fgvt_sync::operations]
impl Handles {
    fn new() -> Self {
        Handles {
            total: fgvt_sync::Mutex::new(0),
            pair: fgvt_sync::RwLock::new((7, true)),
            shared: std::sync::Arc::new(40),
        }
    }

    /// Adds under the lock and hands the guard back: the caller sees the new total.
    pub fn add(&self, n: i64) -> fgvt_sync::MutexGuard<'_, i64> {
        let mut total = self.total.lock().unwrap();
        *total += n;
        total
    }

    pub fn pair(&self) -> fgvt_sync::RwLockReadGuard<'_, (i64, bool)> {
        self.pair.read().unwrap()
    }

    pub fn handle(&self) -> std::sync::Arc<i64> {
        std::sync::Arc::clone(&self.shared)
    }

    pub fn boxed(&self) -> Box<i64> {
        Box::new(*self.shared + 2)
    }

    pub fn by_ref(&self) -> &i64 {
        &self.shared
    }
}

#[test]
fn guards_and_handles_are_results_and_guards_are_released_on_return() {
    let test = Test::<Handles>::new("handles")
        .thread(&["add(1)", "pair()"])
        .thread(&["add(2)", "handle()"])
        .finally(&["boxed()", "by_ref()", "add(0)"]);
    let found = test.localize().unwrap();
    // Each guard was released as its operation returned: no run is stuck on the lock.
    assert_eq!(found.report.verdict, fgvt_sync::Verdict::Linearizable);
    assert_eq!(found.report.tree.stuck_leaves, 0);
    // The results are the data behind the handles.
    let replayed = test.replay(&[0, 0, 0, 0, 1, 1, 1]).unwrap().text;
    let shown = [
        "add(1) ⇒ 1",
        "add(2) ⇒ 3",
        "pair() ⇒ (7, true)",
        "handle() ⇒ 40",
        "boxed() ⇒ 42",
        "by_ref() ⇒ 40",
        "add(0) ⇒ 3",
    ];
    for shown in shown {
        assert!(replayed.contains(shown), "{shown} in:\n{replayed}");
    }
}

#[test]
fn fgvt_s_counted_arc_shows_what_it_points_to_as_std_s_does() {
    use fgvt_sync::IntoValue;
    assert_eq!(
        fgvt_sync::Arc::new(40i64).into_value(),
        std::sync::Arc::new(40i64).into_value()
    );
    assert_eq!(fgvt_sync::Arc::new(40i64).into_value(), 40i64.into_value());
    assert_ne!(fgvt_sync::Arc::new(41i64).into_value(), 40i64.into_value());
}
