//! The specs of a Rust object: `self` (Line-Up's, the object's own serial runs on a fresh
//! object) and a sequential Rust type.

use std::hash::Hash;
use std::marker::PhantomData;
use std::panic::{catch_unwind, AssertUnwindSafe};

use fgvt_checker::{Apply, Spec};
use fgvt_tree::{Call, ThreadId, Value};

use crate::object::Object;
use crate::runtime::{panic_message, OutOfSteps, WouldBlock};

/// Calls run serially on a fresh object of one type: [`serial_run`] for that type, as a plain
/// function so that the specs and checks that use it are compiled once, not per object type.
pub(crate) type SerialRun = fn(&[Call], &Call) -> std::thread::Result<Result<Value, String>>;

/// Runs `earlier`, then `call`, on a fresh `O`, outside any scheduler: `call`'s result, the
/// first `Err` of them all, or the panic that stopped them.
pub(crate) fn serial_run<O: Object>(
    earlier: &[Call],
    call: &Call,
) -> std::thread::Result<Result<Value, String>> {
    catch_unwind(AssertUnwindSafe(|| {
        let object = O::new();
        for done in earlier {
            object.call(done)?;
        }
        object.call(call)
    }))
}

/// The most accesses a call may take when [`refusal`] runs it alone.
const CHECK_STEPS: u64 = 100_000;

/// Why the object `serial` runs refuses `call` after `init`, if it does: its [`Object::call`]
/// returns `Err` (an unknown operation, wrong arguments) in a serial run. A panic is the
/// object's own failure, which a run reports; a call that waits forever when run alone (a spin
/// on a flag nobody sets) is cut after a budget of accesses and passes: the runs will show what
/// it does.
pub(crate) fn refusal(serial: SerialRun, init: &[Call], call: &Call) -> Option<String> {
    match crate::runtime::bounded(CHECK_STEPS, || serial(init, call)) {
        Ok(Err(message)) => Some(message),
        _ => None,
    }
}

/// The spec whose state is the operations applied so far: applying one more runs them all, in
/// order, on a fresh object, then the new one, and takes its result. A call that waits forever
/// in that serial run (a condition variable's wait, a lock an earlier call kept, a spin past
/// [`CHECK_STEPS`] accesses) *blocks* there, as Line-Up's serial runs say of a blocking call.
///
/// `serial` runs the calls on a fresh object of the tested type.
pub(crate) struct SelfSpec {
    serial: SerialRun,
}

impl SelfSpec {
    pub(crate) fn new(serial: SerialRun) -> Self {
        SelfSpec { serial }
    }
}

impl Spec for SelfSpec {
    type State = Vec<Call>;

    fn initial(&self) -> Vec<Call> {
        Vec::new()
    }

    fn apply(&self, state: &Vec<Call>, _thread: ThreadId, call: &Call) -> Apply<Vec<Call>> {
        match crate::runtime::bounded(CHECK_STEPS, || (self.serial)(state, call)) {
            Ok(Ok(value)) => {
                let mut next = state.clone();
                next.push(call.clone());
                Apply::Returns { value, state: next }
            }
            Ok(Err(message)) => Apply::Invalid(message),
            // Alone, the call waits forever: on a condition variable or a lock (nothing could
            // wake it), or spinning past the budget (nothing could change what it waits for).
            Err(payload) if payload.is::<WouldBlock>() || payload.is::<OutOfSteps>() => {
                Apply::Blocks
            }
            Err(payload) => Apply::Invalid(format!(
                "`{call}` panicked in a serial run: {}",
                panic_message(payload.as_ref())
            )),
        }
    }

    fn name(&self) -> String {
        "self".to_string()
    }
}

/// A sequential version of an object, used as its spec: a plain Rust value whose state *is*
/// the spec state (so the checker shares equal states), stepped by one call at a time.
///
/// Where `self` replays every earlier call on a fresh object for each step, a sequential type
/// is stepped once per call, and it can say what the concurrent object should do where that
/// object is wrong even when run alone.
///
/// `#[fgvt_sync::sequential]` on the type's impl block writes this trait from its methods (as
/// `#[fgvt_sync::operations]` writes [`Object`]); by hand, it reads:
///
/// ```
/// use fgvt_sync::{unknown, Arg, Call, IntoValue, Sequential, Value};
///
/// /// A counter, sequentially.
/// #[derive(Clone, PartialEq, Eq, Hash)]
/// struct SeqCounter(i64);
///
/// impl Sequential for SeqCounter {
///     fn new() -> Self {
///         SeqCounter(0)
///     }
///
///     fn call(&mut self, call: &Call) -> Result<Value, String> {
///         match (call.op.as_str(), call.args.as_slice()) {
///             ("inc", []) => {
///                 self.0 += 1;
///                 Ok(().into_value())
///             }
///             ("get", []) => Ok(self.0.into_value()),
///             _ => Err(unknown(call)),
///         }
///     }
/// }
/// ```
///
/// A test takes it with [`Test::spec_type`](crate::Test::spec_type); a program made by
/// `main!` lists it after its objects (`main!(Counter; specs: SeqCounter)`) so that test files
/// can name it as their `"spec"`.
pub trait Sequential: Clone + Eq + Hash + 'static {
    /// The initial state.
    fn new() -> Self;

    /// Runs `call` on this state; `Err` names an operation the spec does not have, or wrong
    /// arguments.
    fn call(&mut self, call: &Call) -> Result<Value, String>;
}

/// The spec of a [`Sequential`] type `S`.
pub(crate) struct SequentialSpec<S>(PhantomData<fn() -> S>);

impl<S: Sequential> SequentialSpec<S> {
    pub(crate) fn new() -> Self {
        SequentialSpec(PhantomData)
    }
}

impl<S: Sequential> Spec for SequentialSpec<S> {
    type State = S;

    fn initial(&self) -> S {
        S::new()
    }

    fn apply(&self, state: &S, _thread: ThreadId, call: &Call) -> Apply<S> {
        let mut next = state.clone();
        match catch_unwind(AssertUnwindSafe(|| next.call(call))) {
            Ok(Ok(value)) => Apply::Returns { value, state: next },
            Ok(Err(message)) => Apply::Invalid(message),
            Err(payload) => Apply::Invalid(format!(
                "`{call}` panicked in the sequential spec: {}",
                panic_message(payload.as_ref())
            )),
        }
    }

    fn name(&self) -> String {
        short_type_name::<S>()
    }
}

/// `O`'s name without its module path (`Counter`, not `counter::Counter`): how reports and test
/// files name a [`Sequential`] spec type, and reports an object's type.
pub(crate) fn short_type_name<O>() -> String {
    let full = std::any::type_name::<O>();
    let path = full.split('<').next().unwrap_or(full);
    let start = path.rfind("::").map_or(0, |i| i + 2);
    full[start..].to_string()
}
