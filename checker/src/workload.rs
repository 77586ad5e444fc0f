//! Generated histories for benchmarks, like the P-compositionality paper's workload.

use std::collections::BTreeSet;

use fgvt_tree::{Call, History, Value};

/// How many distinct keys [`generate_set_history`] uses.
pub const SET_KEYS: i64 = 8;

/// Where one simulated thread is in its current operation.
enum Phase {
    /// Between operations.
    Idle,
    /// Called, not yet taken effect.
    Called(Call),
    /// Taken effect with this result, not yet returned.
    Done(Value),
}

/// A linearizable history of a set (`add`, `remove`, `contains` on keys `0..SET_KEYS`, each
/// returning a bool), `threads × ops_per_thread` operations, deterministic in the draws.
///
/// `below(n)` draws a number uniformly from `0..n`; the caller brings the random source (a
/// seeded generator in benchmarks and tests), so the checker itself carries no RNG.
///
/// It simulates a correct concurrent set: a random scheduler moves one thread at a time through
/// call → linearization point (applied to a real set) → return, so operations overlap freely
/// and the history is linearizable by construction. With 4 threads × 70,000 operations it is the
/// P-compositionality paper's workload.
pub fn generate_set_history(
    threads: usize,
    ops_per_thread: usize,
    below: &mut dyn FnMut(usize) -> usize,
) -> History {
    let mut set = BTreeSet::new();
    simulate(
        threads,
        ops_per_thread,
        below,
        &mut |_, _, below| {
            let key = Value::Int(below(SET_KEYS as usize) as i64);
            Call::new(["add", "remove", "contains"][below(3)], vec![key])
        },
        &mut |call| {
            let key = &call.args[0];
            Value::Bool(match call.op.as_str() {
                "add" => set.insert(key.clone()),
                "remove" => set.remove(key),
                _ => set.contains(key),
            })
        },
    )
}

/// `below(n)`: a number drawn uniformly from `0..n`.
type Draw<'a> = dyn FnMut(usize) -> usize + 'a;

/// A correct concurrent object, simulated: a random scheduler moves one thread at a time
/// through call → linearization point → return, so operations overlap freely and the history
/// is linearizable by construction. `next_call(thread, n, below)` is the `n`th call of
/// `thread`; `take_effect` applies a call to the object and gives its result.
fn simulate(
    threads: usize,
    ops_per_thread: usize,
    below: &mut dyn FnMut(usize) -> usize,
    next_call: &mut dyn FnMut(usize, usize, &mut Draw<'_>) -> Call,
    take_effect: &mut dyn FnMut(&Call) -> Value,
) -> History {
    let mut phases: Vec<Phase> = (0..threads).map(|_| Phase::Idle).collect();
    let mut left = vec![ops_per_thread; threads];
    let mut history = History::new();
    let mut active: Vec<usize> = if ops_per_thread > 0 {
        (0..threads).collect()
    } else {
        Vec::new()
    };
    while !active.is_empty() {
        let slot = below(active.len());
        let thread = active[slot];
        phases[thread] = match std::mem::replace(&mut phases[thread], Phase::Idle) {
            Phase::Idle => {
                let call = next_call(thread, ops_per_thread - left[thread], below);
                history.call(thread, call.clone());
                Phase::Called(call)
            }
            Phase::Called(call) => Phase::Done(take_effect(&call)),
            Phase::Done(result) => {
                history.ret(thread, result);
                left[thread] -= 1;
                if left[thread] == 0 {
                    active.swap_remove(slot);
                }
                Phase::Idle
            }
        };
    }
    history
}

/// How many distinct keys [`generate_kv_history`] uses (porcupine's kv tests use 10).
pub const KV_KEYS: usize = 10;

/// A history of a string key/value store in the shape of porcupine's kv tests: `clients`
/// clients × `ops_per_client` operations (`get`, `put`, `append` on keys `"0".."9"`, values
/// like `"x 3 7 y"`), linearizable by construction as [`generate_set_history`] builds them.
/// With `corrupt`, the last `get` returns what it saw with a stray suffix nobody appended
/// (one more `get` is added when there was none), which makes the history not linearizable.
pub fn generate_kv_history(
    clients: usize,
    ops_per_client: usize,
    corrupt: bool,
    below: &mut dyn FnMut(usize) -> usize,
) -> History {
    let mut store: Vec<String> = vec![String::new(); KV_KEYS];
    let mut history = simulate(
        clients,
        ops_per_client,
        below,
        &mut |client, n, below| {
            let key = Value::Str(below(KV_KEYS).to_string().into());
            let value = Value::Str(format!("x {client} {n} y").into());
            // porcupine's mix: mostly appends and gets, a few puts.
            match below(20) {
                0 => Call::new("put", vec![key, value]),
                1..=10 => Call::new("append", vec![key, value]),
                _ => Call::new("get", vec![key]),
            }
        },
        &mut |call| {
            let Value::Str(key) = &call.args[0] else {
                unreachable!("keys are strings")
            };
            let slot = &mut store[key.parse::<usize>().expect("keys are numbers")];
            match (call.op.as_str(), call.args.get(1)) {
                ("put", Some(Value::Str(v))) => {
                    *slot = v.to_string();
                    Value::Unit
                }
                ("append", Some(Value::Str(v))) => {
                    slot.push_str(v);
                    Value::Unit
                }
                _ => Value::Str(slot.as_str().into()),
            }
        },
    );
    if corrupt {
        // Every `get` returns a string of whole "x c n y" pieces, each appended once: one with
        // a piece nobody wrote cannot be placed, even where it saw the empty string.
        const STRAY: &str = "x 99 99 y";
        let last_get = history.events.iter_mut().rev().find_map(|e| match e {
            fgvt_tree::CoarseEvent::Return {
                value: Some(Value::Str(s)),
                ..
            } => Some(s),
            _ => None,
        });
        match last_get {
            Some(s) => *s = format!("{s}{STRAY}").into(),
            // No `get` at all (rare): one more, by the first client, after everything.
            None => {
                history.call(0, Call::new("get", vec![Value::Str("0".into())]));
                history.ret(0, Value::Str(STRAY.into()));
            }
        }
    }
    history
}
