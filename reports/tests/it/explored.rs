//! Labels and CDRS of trees built by the real explorer, memoized (a DAG) and plain (a tree):
//! both must give the same unfolded counts and the same CDRS.

use fgvt_labeling::cdrs::{find_cdrs, CdrsOptions};
use fgvt_labeling::labels::{label_tree, Label, LeafOutcome};
use fgvt_labeling::pattern::Pattern;
use fgvt_reports::{build_report, render_markdown, ReportInput, TestInfo, Verdict};
use fgvt_tree::{
    explore, Call, CoarseEvent, Event, EventKind, ExploreOptions, Fault, History, Program,
    SourceMap, Span, Step, Value,
};

/// `threads` threads each run a non-atomic `inc()`: `int t = x; int u = y; x = t + 1;`.
struct LostUpdate {
    threads: usize,
}

#[derive(Clone, PartialEq, Eq, Hash)]
struct State {
    pc: Vec<u8>,
    local: Vec<i64>,
    x: i64,
}

impl Program for LostUpdate {
    type State = State;

    fn threads(&self) -> usize {
        self.threads
    }

    fn initial_state(&self) -> Result<(State, History), Fault> {
        let n = self.threads;
        let state = State {
            pc: vec![0; n],
            local: vec![0; n],
            x: 0,
        };
        Ok((state, History::new()))
    }

    fn step(&self, s: &State, t: usize) -> Step<State> {
        let mut next = s.clone();
        let mut event = Event {
            thread: t,
            op_index: 0,
            op: "inc".into(),
            kind: EventKind::Read,
            location: "x".into(),
            value: String::new(),
            span: Span::new(0, 0, 1),
            call: None,
            ret: None,
            order: None,
            memory: None,
            seen: None,
            footprint: fgvt_tree::Footprint::Everything,
        };
        match s.pc[t] {
            0 => {
                next.local[t] = s.x;
                event.call = Some(Call::new("inc", vec![]));
                event.value = s.x.to_string();
            }
            // A read that emits no coarse event: swapping two of them reaches the same state,
            // which memoization shares.
            1 => {
                event.location = "y".into();
                event.value = "0".into();
            }
            2 => {
                next.x = s.local[t] + 1;
                event.kind = EventKind::Write;
                event.value = next.x.to_string();
                event.span = Span::new(0, 2, 11);
                event.ret = Some(Value::Unit);
            }
            _ => return Step::Done,
        }
        next.pc[t] += 1;
        Step::Moved {
            state: next,
            event: event.into(),
        }
    }

    fn finish(&self, s: &State) -> Result<History, Fault> {
        let mut h = History::new();
        h.call(0, Call::new("get", vec![]));
        h.ret(0, Value::Int(s.x));
        Ok(h)
    }

    fn blocked_calls(&self, _: &State) -> Vec<(usize, Call)> {
        Vec::new()
    }
}

fn passes(threads: usize) -> impl Fn(fgvt_tree::NodeId, &fgvt_tree::Leaf) -> LeafOutcome {
    move |_, leaf| match leaf.history.events.last() {
        Some(CoarseEvent::Return {
            value: Some(Value::Int(x)),
            ..
        }) if *x == threads as i64 => LeafOutcome::Pass,
        _ => LeafOutcome::Fail,
    }
}

#[test]
fn memoized_and_plain_trees_give_the_same_labels_and_cdrs() {
    let program = LostUpdate { threads: 3 };
    let mut results = Vec::new();
    for memoize in [false, true] {
        let options = ExploreOptions {
            memoize,
            ..ExploreOptions::default()
        };
        let tree = explore(&program, &options).unwrap();
        let labeling = label_tree(&tree, passes(3));
        let cdrs = find_cdrs(
            &tree,
            &labeling,
            &Pattern::default(),
            &CdrsOptions::default(),
        );
        assert!(!cdrs.truncated);
        assert_eq!(cdrs.covered_failing_leaves(), labeling.failing_leaves());
        let counts: Vec<(Label, u64)> = labeling.unfolded_counts().iter().collect();
        let groups: Vec<(String, u64)> = cdrs
            .groups
            .iter()
            .map(|g| (g.pattern(), g.failing_leaves))
            .collect();
        for g in &cdrs.groups {
            assert_eq!(tree.follow(&g.witness).unwrap().1, g.witness_leaf);
        }
        results.push((
            tree.stats().leaves,
            labeling.failing_leaves(),
            counts,
            groups,
            tree.graph.node_count(),
        ));
    }
    let (plain, memo) = (&results[0], &results[1]);
    assert_eq!(plain.0, 1680, "9! / 3!^3 interleavings");
    assert_eq!(
        (plain.0, plain.1, &plain.2, &plain.3),
        (memo.0, memo.1, &memo.2, &memo.3)
    );
    assert!(memo.4 < plain.4, "memoization shares nodes");
}

#[test]
fn a_report_of_an_explored_tree_renders() {
    let program = LostUpdate { threads: 2 };
    let tree = explore(&program, &ExploreOptions::default()).unwrap();
    let labeling = label_tree(&tree, passes(2));
    let pattern = Pattern::default();
    let cdrs = find_cdrs(&tree, &labeling, &pattern, &CdrsOptions::default());
    let mut sources = SourceMap::new();
    sources.add("inc.fgv", "t = x;\nx = t + 1;\n");
    let test = TestInfo {
        file: "inc.json".into(),
        ..TestInfo::default()
    };
    let input = ReportInput {
        tree: &tree,
        labeling: &labeling,
        cdrs: &cdrs,
        pattern: &pattern,
        sources: &sources,
        test: &test,
        max_cdrs: 5,
        replay: Default::default(),
    };
    let report = build_report(&input, |_, _| None);
    assert_eq!(report.verdict, Verdict::NotLinearizable);
    assert_eq!(report.cdrs_found, cdrs.groups.len());
    for c in &report.cdrs {
        let word: Vec<Label> = c
            .pattern
            .split(' ')
            .map(|l| Label::from_name(l).unwrap())
            .collect();
        assert!(pattern.matches(&word), "{}", c.pattern);
    }
    assert!(render_markdown(&report).contains("fgvt explore inc.json --schedule "));
}
