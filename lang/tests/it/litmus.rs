//! Models under weak memory against the axioms: litmus programs written as models (each
//! thread an operation that returns its registers, a `final` operation that returns every
//! location), every leaf of the explored tree read as an outcome, and the set of outcomes
//! compared with the brute-force enumeration of RC11-consistent executions
//! (`fgvt_memory::litmus::brute_force`): the classic tests with every combination of orders,
//! their fenced forms, and small random programs of loads, stores and fences.

use std::collections::BTreeSet;
use std::fmt::Write;
use std::sync::Arc;

use fgvt_lang::{parse_call, Model, TestProgram};
use fgvt_memory::litmus::{self, brute_force, Instr, Outcome, Program};
use fgvt_memory::Order::{self, AcqRel, Acquire, Relaxed, Release, SeqCst};
use fgvt_tree::{explore, CoarseEvent, ExploreOptions, LeafKind, SourceMap, Value};
use proptest::prelude::*;

/// How the language spells `order`.
fn spelled(order: Order) -> &'static str {
    match order {
        Relaxed => "relaxed",
        Acquire => "acquire",
        Release => "release",
        AcqRel => "acq_rel",
        SeqCst => "seq_cst",
    }
}

/// `p` as a model: thread `t` is operation `t{t}()`, which returns its registers.
fn model_text(p: &Program) -> String {
    let mut text = String::from("object Litmus {\n");
    for (l, v) in p.locations.iter().enumerate() {
        writeln!(text, "    shared int x{l} = {v};").unwrap();
    }
    let registers = p.initial_registers();
    for (t, thread) in p.threads.iter().enumerate() {
        writeln!(text, "    op t{t}() {{").unwrap();
        for (r, v) in registers[t].iter().enumerate() {
            writeln!(text, "        int r{r} = {v};").unwrap();
        }
        for instr in thread {
            match *instr {
                Instr::Load { loc, order, reg } => {
                    writeln!(text, "        r{reg} = x{loc}.load({});", spelled(order))
                }
                Instr::Store { loc, value, order } => {
                    writeln!(text, "        x{loc}.store({value}, {});", spelled(order))
                }
                Instr::Fence(Relaxed) => Ok(()),
                Instr::Fence(order) => writeln!(text, "        fence({});", spelled(order)),
                other => panic!("no model for {other:?}"),
            }
            .unwrap();
        }
        let regs: Vec<String> = (0..registers[t].len()).map(|r| format!("r{r}")).collect();
        match regs.len() {
            0 => writeln!(text, "        return 0;"),
            1 => writeln!(text, "        return {};", regs[0]),
            _ => writeln!(text, "        return ({});", regs.join(", ")),
        }
        .unwrap();
        writeln!(text, "    }}").unwrap();
    }
    let locs: Vec<String> = (0..p.locations.len()).map(|l| format!("x{l}")).collect();
    let memory = if locs.len() == 1 {
        locs[0].clone()
    } else {
        format!("({})", locs.join(", "))
    };
    writeln!(text, "    op memory() {{ return {memory}; }}\n}}").unwrap();
    text
}

/// The integers of a returned value (a tuple or one integer).
fn ints(v: &Value, n: usize) -> Vec<u64> {
    match v {
        Value::Tuple(items) => items.iter().flat_map(|i| ints(i, 1)).collect(),
        Value::Int(i) if n == 1 => vec![*i as u64],
        Value::Int(_) if n == 0 => Vec::new(),
        other => panic!("{other:?}"),
    }
}

/// The outcomes of every complete run of `p` written as a model.
fn outcomes(p: &Program) -> BTreeSet<Outcome> {
    let text = model_text(p);
    let model = Model::compile(&mut SourceMap::new(), "litmus.fgv", &text, None)
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
    let weak = p.threads.iter().flatten().any(|i| match *i {
        Instr::Load { order, .. } | Instr::Store { order, .. } => order != SeqCst,
        Instr::Fence(order) => order != SeqCst && order != Relaxed,
        _ => true,
    });
    assert_eq!(model.is_weak(), weak, "{text}");
    let threads = (0..p.threads.len())
        .map(|t| vec![parse_call(&format!("t{t}()")).unwrap()])
        .collect();
    let program = TestProgram::new(
        Arc::new(model),
        Vec::new(),
        threads,
        vec![parse_call("memory()").unwrap()],
    )
    .with_max_stale(16);
    let tree = explore(&program, &ExploreOptions::default()).expect("explores");
    let registers = p.initial_registers();
    let mut found = BTreeSet::new();
    for (_, leaf, _) in tree.leaves() {
        assert_eq!(leaf.kind, LeafKind::Complete, "{text}\n{:?}", leaf.bound);
        let mut outcome = Outcome {
            registers: registers.clone(),
            memory: Vec::new(),
        };
        for event in &leaf.history.events {
            if let CoarseEvent::Return {
                thread,
                value: Some(value),
            } = event
            {
                match registers.get(*thread) {
                    Some(regs) => outcome.registers[*thread] = ints(value, regs.len()),
                    None => outcome.memory = ints(value, p.locations.len()),
                }
            }
        }
        found.insert(outcome);
    }
    found
}

fn agree(p: &Program) {
    assert_eq!(
        outcomes(p),
        brute_force(p),
        "the model and the axioms disagree on\n{p}\n{}",
        model_text(p)
    );
}

const LOADS: [Order; 3] = [Relaxed, Acquire, SeqCst];
const STORES: [Order; 3] = [Relaxed, Release, SeqCst];

#[test]
fn message_passing_with_every_combination_of_orders() {
    for a in STORES {
        for b in STORES {
            for c in LOADS {
                for d in LOADS {
                    agree(&litmus::mp(a, b, c, d));
                }
            }
        }
    }
}

#[test]
fn store_buffering_with_every_combination_of_orders() {
    for a in STORES {
        for b in LOADS {
            for c in STORES {
                for d in LOADS {
                    agree(&litmus::sb(a, b, c, d));
                }
            }
        }
    }
}

#[test]
fn load_buffering_with_every_combination_of_orders() {
    for a in LOADS {
        for b in STORES {
            for c in LOADS {
                for d in STORES {
                    agree(&litmus::lb(a, b, c, d));
                }
            }
        }
    }
}

#[test]
fn two_plus_two_w_with_every_combination_of_orders() {
    for a in STORES {
        for b in STORES {
            for c in STORES {
                for d in STORES {
                    agree(&litmus::two_plus_two_w(a, b, c, d));
                }
            }
        }
    }
}

#[test]
fn iriw_with_every_combination_of_orders() {
    for a in STORES {
        for b in STORES {
            for c in LOADS {
                for d in LOADS {
                    for e in LOADS {
                        for f in LOADS {
                            agree(&litmus::iriw(a, b, c, d, e, f));
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn the_fenced_forms_with_every_pair_of_fences() {
    let fences = [
        None,
        Some(Release),
        Some(Acquire),
        Some(AcqRel),
        Some(SeqCst),
    ];
    for f in fences {
        for g in fences {
            agree(&litmus::mp_fenced(f, g));
            agree(&litmus::sb_fenced(f, g));
            agree(&litmus::iriw_fenced(f, g));
        }
    }
}

/// Loads, stores and fences (a model's `cas` returns whether it swapped, not the value a
/// litmus register would get, so compare-exchanges are left to the classic tests' kin in
/// `fgvt-memory`).
fn instr() -> impl Strategy<Value = Instr> {
    let loc = 0u32..2;
    prop_oneof![
        (loc.clone(), prop::sample::select(LOADS.to_vec()), 0usize..2)
            .prop_map(|(loc, order, reg)| Instr::Load { loc, order, reg }),
        (loc, 1u64..3, prop::sample::select(STORES.to_vec()))
            .prop_map(|(loc, value, order)| Instr::Store { loc, value, order }),
        prop::sample::select(Order::ALL.to_vec()).prop_map(Instr::Fence),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn random_programs_give_exactly_the_axioms_outcomes(
        threads in prop::collection::vec(prop::collection::vec(instr(), 1..4), 2..4)
    ) {
        let p = Program { locations: vec![0, 0], threads };
        prop_assert_eq!(outcomes(&p), brute_force(&p), "{}\n{}", p, model_text(&p));
    }
}
