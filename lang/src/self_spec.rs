//! The sequential spec synthesized from the object's own serial runs (Line-Up's `self`).

use std::sync::Arc;

use fgvt_checker::{Apply, Spec};
use fgvt_tree::{Call, ThreadId};

use super::interp::{run_serial, Memory, Stop, DEFAULT_BUDGET};
use super::model::{Model, WAIT_ADVICE};
use super::test_program::initialize;
use super::value::Val;

/// The spec synthesized from the object's own serial runs (Line-Up's): its state is the
/// object's memory, and an operation's result is what the object returns running it alone.
#[derive(Clone, Debug)]
pub struct SelfSpec {
    model: Arc<Model>,
    initial: Result<Memory, String>,
    budget: u64,
}

impl SelfSpec {
    /// The synthesized spec of `model`. A constructor that fails makes every `apply` invalid.
    pub fn new(model: Arc<Model>) -> SelfSpec {
        SelfSpec::with_budget(model, DEFAULT_BUDGET)
    }

    /// The synthesized spec of `model`, whose serial runs may execute at most `budget`
    /// instructions per operation (an operation that runs longer is invalid: it never ends).
    pub fn with_budget(model: Arc<Model>, budget: u64) -> SelfSpec {
        let initial = initialize(&model, budget).map_err(|s| match s {
            Stop::Fault(m, span) => {
                format!("the constructor fails at {}: {m}", model.position(span))
            }
            Stop::Blocked(..) => "the constructor blocks".to_string(),
            Stop::Budget(at) => format!(
                "the constructor runs more than {budget} instructions, in {}",
                model.loop_at(at)
            ),
            // Serial runs are sequentially consistent: no way is ever cut.
            Stop::Cut { access, .. } => format!("the constructor was cut at {access}"),
        });
        SelfSpec {
            model,
            initial,
            budget,
        }
    }

    /// The model the spec runs.
    pub fn model(&self) -> &Arc<Model> {
        &self.model
    }
}

impl Spec for SelfSpec {
    type State = Memory;

    fn initial(&self) -> Memory {
        match &self.initial {
            Ok(mem) => mem.clone(),
            Err(_) => Memory::empty(&self.model),
        }
    }

    fn apply(&self, state: &Memory, thread: ThreadId, call: &Call) -> Apply<Memory> {
        if let Err(e) = &self.initial {
            return Apply::Invalid(e.clone());
        }
        if let Err(e) = self.model.check_call(call) {
            return Apply::Invalid(e);
        }
        let f = self.model.op_id(&call.op).expect("check_call found it");
        let args = call.args.iter().map(Val::from_value).collect();
        match run_serial(
            &self.model,
            state.clone(),
            thread as u32,
            f,
            args,
            self.budget,
        ) {
            Ok((v, mem)) => Apply::Returns {
                value: v.to_value(),
                state: mem,
            },
            Err(Stop::Blocked(..)) => Apply::Blocks,
            Err(Stop::Fault(m, span)) => Apply::Invalid(format!(
                "`{call}` run alone fails at {}: {m}",
                self.model.position(span)
            )),
            Err(Stop::Budget(at)) => Apply::Invalid(format!(
                "`{call}` run alone does not finish: it runs more than {} instructions, in {}; \
                 {WAIT_ADVICE}",
                self.budget,
                self.model.loop_at(at)
            )),
            // Serial runs are sequentially consistent: no way is ever cut.
            Err(Stop::Cut { access, .. }) => {
                Apply::Invalid(format!("`{call}` run alone was cut at {access}"))
            }
        }
    }

    fn name(&self) -> String {
        "self".into()
    }
}
