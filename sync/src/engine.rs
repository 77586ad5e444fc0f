//! fgvt's own engine: the tasks of one execution as coroutines on the calling OS thread, run one
//! at a time by a loop that asks who goes next.
//!
//! An execution has a *main task* (the test's body: the object, `init`, spawning the threads,
//! joining them, `final`) and the tasks it spawns (the test threads). Each task runs on a
//! coroutine of its own ([`corosensei`]) until it hands control back: at a [`switch`] (an
//! instrumented access about to act), at a [`join`] of a task that has not finished, or when it
//! returns. [`Tasks::run`] then lists the tasks that can run and asks its caller's `decide`
//! which one goes on ([`Decision`]) — or whether to stop there, with every task suspended where
//! it is (a *paused* execution, which a later [`Tasks::run`] takes up from the same point).
//!
//! Spawning is not a scheduling point: the spawner goes on at once with the new task's id.
//!
//! Task stacks are kept for the next execution: an execution is a few dozen steps, and mapping
//! fresh stacks for each would cost more than running it.
//!
//! The engine knows nothing of steps, schedules or memory: that is the recorder's
//! (`runtime.rs`), which answers `decide` and registers each access before it switches.

use std::any::Any;
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};

/// A task of the current execution: its index in spawn order, the main task being 0.
pub(crate) type TaskId = usize;

/// The stack of each task. A test thread runs the user's object code on it (in a debug build
/// too), so it is roomy; pages are only committed as they are touched.
const TASK_STACK: usize = 256 * 1024;

/// What a task asks of the loop when it hands control back.
enum Request {
    /// Let the loop decide who goes next (this task stays runnable).
    Switch,
    /// Make a task that runs this function; the spawner goes on with its id.
    Spawn(Box<dyn FnOnce()>),
    /// Wait until this task has finished.
    Join(TaskId),
}

/// What the loop answers a task it resumes.
enum Answer {
    /// Go on.
    Go,
    /// The task asked for is made, with this id.
    Spawned(TaskId),
    /// The task asked for could not be made (no stack).
    Failed(String),
}

/// A task's coroutine.
type TaskCoroutine = Coroutine<Answer, Request, (), DefaultStack>;

thread_local! {
    /// The yielder of the task running now on this OS thread, null outside a task: how a task
    /// deep in the user's code hands control back without holding its coroutine.
    static YIELDER: Cell<*const Yielder<Answer, Request>> = const { Cell::new(std::ptr::null()) };

    /// The task running now on this OS thread (or the last one that did).
    static CURRENT: Cell<TaskId> = const { Cell::new(0) };
}

/// Who the loop's caller lets run next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Resume this task (one of those offered).
    Run(TaskId),
    /// Stop here, every task suspended: [`Tasks::run`] returns [`Stop::Paused`].
    Pause,
}

/// Why [`Tasks::run`] returned.
pub(crate) enum Stop {
    /// Every task has finished: the execution is over.
    Done,
    /// `decide` asked to pause; the next [`Tasks::run`] asks it again from the same point.
    Paused,
    /// A task panicked (the panic was not caught in it): that task has finished, the others
    /// are where they were, and the next [`Tasks::run`] goes on with them.
    Escaped(Box<dyn Any + Send>),
}

/// One task: its coroutine while it lives, and what it waits for.
struct Slot {
    /// `None` once the task has finished (its stack is back in the pool).
    coroutine: Option<TaskCoroutine>,
    /// Where the task hands control back from, once it has started.
    yielder: *const Yielder<Answer, Request>,
    /// The task it joins, while that one runs.
    joining: Option<TaskId>,
}

/// The tasks of the current execution, and the stacks kept for the next one.
#[derive(Default)]
pub(crate) struct Tasks {
    slots: Vec<Slot>,
    /// Stacks of finished tasks, ready for new ones.
    stacks: Vec<DefaultStack>,
    /// The runnable tasks, in id order (kept to reuse its room).
    runnable: Vec<TaskId>,
}

impl Tasks {
    /// Whether some task of the current execution has not finished.
    pub(crate) fn live(&self) -> bool {
        self.slots.iter().any(|slot| slot.coroutine.is_some())
    }

    /// Starts a new execution whose main task runs `main` (not yet: at the first
    /// [`Tasks::run`]). The last execution must be over (a task of it still suspended is given
    /// up, see [`Tasks::forsake`]).
    pub(crate) fn begin(&mut self, main: impl FnOnce() + 'static) -> Result<(), String> {
        debug_assert!(
            !self.live(),
            "an execution begins after the last one is over"
        );
        self.forsake();
        self.create(main).map(|_| ())
    }

    /// Runs the execution until every task has finished, `decide` pauses it, or a panic
    /// escapes a task. `decide` gets the runnable tasks, in id order, never none.
    pub(crate) fn run(&mut self, mut decide: impl FnMut(&[TaskId]) -> Decision) -> Stop {
        loop {
            let mut runnable = std::mem::take(&mut self.runnable);
            runnable.clear();
            runnable.extend((0..self.slots.len()).filter(|&task| self.runnable_now(task)));
            let decision = if runnable.is_empty() {
                None
            } else {
                Some(decide(&runnable))
            };
            self.runnable = runnable;
            match decision {
                None => return Stop::Done,
                Some(Decision::Pause) => return Stop::Paused,
                Some(Decision::Run(task)) => {
                    debug_assert!(self.runnable.contains(&task), "a runnable task is chosen");
                    if let Err(payload) = self.resume(task) {
                        return Stop::Escaped(payload);
                    }
                }
            }
        }
    }

    /// Gives up the tasks still suspended, without running them again: only for an execution
    /// that can no longer be run to its end (its recorder failed). Their stacks are leaked,
    /// since dropping a suspended coroutine would unwind the user's code from outside.
    pub(crate) fn forsake(&mut self) {
        for slot in &mut self.slots {
            if let Some(coroutine) = slot.coroutine.take() {
                std::mem::forget(coroutine);
            }
        }
        self.slots.clear();
    }

    /// Whether `task` has not finished and waits for no task that has not.
    fn runnable_now(&self, task: TaskId) -> bool {
        let slot = &self.slots[task];
        slot.coroutine.is_some() && slot.joining.is_none_or(|target| self.finished(target))
    }

    /// Whether `task` has finished (an id never made counts as finished: nothing to wait for).
    fn finished(&self, task: TaskId) -> bool {
        self.slots
            .get(task)
            .is_none_or(|slot| slot.coroutine.is_none())
    }

    /// A new task running `f`, on a kept stack or a new one.
    fn create(&mut self, f: impl FnOnce() + 'static) -> Result<TaskId, String> {
        let stack = match self.stacks.pop() {
            Some(stack) => stack,
            None => DefaultStack::new(TASK_STACK)
                .map_err(|e| format!("cannot allocate a stack for a task: {e}"))?,
        };
        let coroutine = Coroutine::with_stack(
            stack,
            move |yielder: &Yielder<Answer, Request>, _first: Answer| {
                YIELDER.set(yielder);
                f();
            },
        );
        self.slots.push(Slot {
            coroutine: Some(coroutine),
            yielder: std::ptr::null(),
            joining: None,
        });
        Ok(self.slots.len() - 1)
    }

    /// Runs `task` until it hands control back for the loop to decide: a switch, a join of a
    /// task still running, its end. A spawn, or a join of a finished task, is answered at once.
    fn resume(&mut self, task: TaskId) -> Result<(), Box<dyn Any + Send>> {
        self.slots[task].joining = None;
        let mut answer = Answer::Go;
        loop {
            let slot = &mut self.slots[task];
            let Some(coroutine) = slot.coroutine.as_mut() else {
                return Ok(());
            };
            YIELDER.set(slot.yielder);
            CURRENT.set(task);
            let result = catch_unwind(AssertUnwindSafe(|| coroutine.resume(answer)));
            // The task that ran is the only one that could have set it (a task never resumes
            // another), so this is its own, the same at every resumption.
            slot.yielder = YIELDER.replace(std::ptr::null());
            let request = match result {
                Ok(CoroutineResult::Yield(request)) => request,
                Ok(CoroutineResult::Return(())) => {
                    self.release(task);
                    return Ok(());
                }
                Err(payload) => {
                    self.release(task);
                    return Err(payload);
                }
            };
            answer = match request {
                Request::Switch => return Ok(()),
                Request::Spawn(f) => match self.create(f) {
                    Ok(id) => Answer::Spawned(id),
                    Err(message) => Answer::Failed(message),
                },
                Request::Join(target) if self.finished(target) => Answer::Go,
                Request::Join(target) => {
                    self.slots[task].joining = Some(target);
                    return Ok(());
                }
            };
        }
    }

    /// Takes back the stack of `task`, which has finished.
    fn release(&mut self, task: TaskId) {
        if let Some(coroutine) = self.slots[task].coroutine.take() {
            self.stacks.push(coroutine.into_stack());
        }
    }
}

impl Drop for Tasks {
    fn drop(&mut self) {
        // The runtime ends every execution before it drops its engine; one that is still
        // suspended here is given up rather than unwound from outside.
        self.forsake();
    }
}

/// Hands control back to the loop with `request`: its answer.
///
/// # Panics
///
/// Outside a task of an execution (a bug of fgvt's: the runtime only switches inside one).
fn suspend(request: Request) -> Answer {
    let yielder = YIELDER.get();
    assert!(
        !yielder.is_null(),
        "fgvt-sync: a task switch outside an execution"
    );
    // SAFETY: the loop sets `YIELDER` to the yielder of the task it resumes, which lives on
    // that task's stack until the task returns, and the task running now is that one.
    unsafe { &*yielder }.suspend(request)
}

/// Lets the loop decide who goes next; returns when this task is chosen again.
pub(crate) fn switch() {
    suspend(Request::Switch);
}

/// Makes a task that runs `f` in the current execution; the caller goes on at once.
///
/// # Panics
///
/// If no stack can be had for it (the panic ends the execution as a fault).
pub(crate) fn spawn(f: impl FnOnce() + 'static) -> TaskId {
    match suspend(Request::Spawn(Box::new(f))) {
        Answer::Spawned(task) => task,
        Answer::Failed(message) => panic!("{message}"),
        Answer::Go => unreachable!("a spawn is answered with the task made"),
    }
}

/// Waits until `task` has finished.
pub(crate) fn join(task: TaskId) {
    suspend(Request::Join(task));
}

/// The task running now (inside an execution), or the last one that ran.
pub(crate) fn current() -> TaskId {
    CURRENT.get()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::rc::Rc;

    /// Runs `tasks` to the end, always resuming the last runnable task offered (so that the
    /// order differs from spawn order).
    fn run_to_end(tasks: &mut Tasks) {
        let stop = tasks.run(|runnable| Decision::Run(*runnable.last().expect("never none")));
        assert!(matches!(stop, Stop::Done));
        assert!(!tasks.live());
    }

    #[test]
    fn tasks_interleave_at_switches_and_join_waits_for_the_end() {
        let log = Rc::new(RefCell::new(Vec::new()));
        let mut tasks = Tasks::default();
        let main_log = Rc::clone(&log);
        tasks
            .begin(move || {
                let workers: Vec<TaskId> = (1..=2)
                    .map(|n| {
                        let log = Rc::clone(&main_log);
                        spawn(move || {
                            log.borrow_mut().push((n, 'a', current()));
                            switch();
                            log.borrow_mut().push((n, 'b', current()));
                        })
                    })
                    .collect();
                assert_eq!(workers, vec![1, 2]);
                for worker in workers {
                    join(worker);
                }
                main_log.borrow_mut().push((0, 'z', current()));
            })
            .unwrap();
        run_to_end(&mut tasks);
        // The last runnable runs first: task 2 (main is joining task 1), to its switch; then
        // still task 2, to its end; then task 1 twice; main last, once both have ended.
        assert_eq!(
            *log.borrow(),
            vec![
                (2, 'a', 2),
                (2, 'b', 2),
                (1, 'a', 1),
                (1, 'b', 1),
                (0, 'z', 0)
            ]
        );
    }

    #[test]
    fn a_paused_execution_goes_on_where_it_stopped_and_stacks_are_kept() {
        let mut tasks = Tasks::default();
        let steps = Rc::new(Cell::new(0));
        for round in 0..3 {
            let counted = Rc::clone(&steps);
            tasks
                .begin(move || {
                    for _ in 0..4 {
                        counted.set(counted.get() + 1);
                        switch();
                    }
                })
                .unwrap();
            let mut decisions = 0;
            let stop = tasks.run(|runnable| {
                decisions += 1;
                if decisions == 3 {
                    Decision::Pause
                } else {
                    Decision::Run(runnable[0])
                }
            });
            assert!(matches!(stop, Stop::Paused));
            assert_eq!(steps.get(), round * 4 + 2);
            assert!(tasks.live());
            run_to_end(&mut tasks);
            assert_eq!(steps.get(), round * 4 + 4);
            // One stack serves every round.
            assert_eq!(tasks.stacks.len(), 1);
        }
    }

    #[test]
    fn a_panic_that_escapes_a_task_ends_that_task_only() {
        let mut tasks = Tasks::default();
        let reached = Rc::new(Cell::new(false));
        let after = Rc::clone(&reached);
        tasks
            .begin(move || {
                let failing = spawn(|| panic!("boom"));
                join(failing);
                after.set(true);
            })
            .unwrap();
        let stop = tasks.run(|runnable| Decision::Run(*runnable.last().unwrap()));
        let Stop::Escaped(payload) = stop else {
            panic!("the panic escapes to the loop's caller");
        };
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"boom"));
        assert!(tasks.live(), "main still runs");
        run_to_end(&mut tasks);
        assert!(
            reached.get(),
            "the join returns once the panicked task has finished"
        );
        assert_eq!(tasks.stacks.len(), 2);
    }
}
