//! Models under weak memory: what runs weak and what does not, merging by the graph's future,
//! spins, locks, regions, the calls' clocks and the bound on ways.

use std::collections::BTreeSet;
use std::sync::Arc;

use fgvt_lang::{parse_call, Model, TestProgram};
use fgvt_memory::fix::Change;
use fgvt_memory::Order;
use fgvt_tree::{explore, Bound, CoarseEvent, ExploreOptions, LeafKind, SourceMap, Tree, Value};

fn model(text: &str) -> Arc<Model> {
    Arc::new(
        Model::compile(&mut SourceMap::new(), "weak.fgv", text, None)
            .unwrap_or_else(|e| panic!("{e:?}")),
    )
}

fn program(m: &Arc<Model>, threads: &[&[&str]], finals: &[&str]) -> TestProgram {
    let calls = |list: &[&str]| list.iter().map(|c| parse_call(c).unwrap()).collect();
    TestProgram::new(
        m.clone(),
        Vec::new(),
        threads.iter().map(|t| calls(t)).collect(),
        calls(finals),
    )
}

fn tree_of(p: &TestProgram, memoize: bool) -> Tree {
    let options = ExploreOptions {
        memoize,
        ..ExploreOptions::default()
    };
    explore(p, &options).expect("explores")
}

/// Every leaf's history, as text, sorted.
fn histories(tree: &Tree) -> BTreeSet<String> {
    tree.leaves()
        .map(|(_, leaf, _)| leaf.history.to_string())
        .collect()
}

/// Per leaf, what each thread's operations returned, in order.
fn results(tree: &Tree) -> BTreeSet<Vec<Vec<Value>>> {
    tree.leaves()
        .map(|(_, leaf, _)| {
            let mut by_thread: Vec<Vec<Value>> = Vec::new();
            for event in &leaf.history.events {
                if let CoarseEvent::Return {
                    thread,
                    value: Some(v),
                } = event
                {
                    if by_thread.len() <= *thread {
                        by_thread.resize(thread + 1, Vec::new());
                    }
                    by_thread[*thread].push(v.clone());
                }
            }
            by_thread
        })
        .collect()
}

/// The values thread `thread` returned, over every complete leaf.
fn returns_of(tree: &Tree, thread: usize) -> BTreeSet<Value> {
    let mut found = BTreeSet::new();
    for (_, leaf, _) in tree.leaves() {
        assert_eq!(leaf.kind, LeafKind::Complete, "{:?}", leaf.bound);
        for event in &leaf.history.events {
            if let CoarseEvent::Return {
                thread: t,
                value: Some(v),
            } = event
            {
                if *t == thread {
                    found.insert(v.clone());
                }
            }
        }
    }
    found
}

const TREIBER: &str = "
object Stack {
    record Node { int item; Node next; }
    shared Node top = null;

    op push(int v) {
        Node n = new Node(v, null);
        loop {
            Node t = top;
            n.next = t;
            if (cas(top, t, n)) return;
        }
    }

    op pop() {
        loop {
            Node t = top;
            if (t == null) return -1;
            Node next = t.next;
            if (cas(top, t, next)) return t.item;
        }
    }
}
";

/// `TREIBER` with every access's ordering written out as `seq_cst`.
const TREIBER_SEQ_CST: &str = "
object Stack {
    record Node { int item; Node next; }
    shared Node top = null;

    op push(int v) {
        Node n = new Node(v, null);
        loop {
            Node t = top.load(seq_cst);
            n.next.store(t, seq_cst);
            if (cas(top, t, n, seq_cst, seq_cst)) return;
        }
    }

    op pop() {
        loop {
            Node t = top.load(seq_cst);
            if (t == null) return -1;
            Node next = t.next.load(seq_cst);
            if (cas(top, t, next, seq_cst)) return t.item.load(seq_cst);
        }
    }
}
";

#[test]
fn a_model_that_declares_only_seq_cst_explores_exactly_as_one_that_declares_nothing() {
    let plain = model(TREIBER);
    let spelled = model(TREIBER_SEQ_CST);
    assert!(!plain.is_weak() && !spelled.is_weak());
    let threads: &[&[&str]] = &[&["push(1)", "pop()"], &["push(2)", "pop()"]];
    for memoize in [true, false] {
        let a = tree_of(&program(&plain, threads, &["pop()"]), memoize);
        let b = tree_of(&program(&spelled, threads, &["pop()"]), memoize);
        assert_eq!(format!("{:?}", a.stats()), format!("{:?}", b.stats()));
        assert_eq!(histories(&a), histories(&b));
        // No event says anything of memory orders.
        assert!(a
            .events
            .iter()
            .all(|e| e.order.is_none() && e.seen.is_none()));
    }
}

const MESSAGE_PASSING: &str = "
object Flag {
    shared int data = 0;
    shared bool ready = false;

    op publish(int v) {
        data.store(v, relaxed);
        ready.store(true, STORE);
    }

    op read() {
        if (ready.load(LOAD)) return data.load(relaxed);
        return -1;
    }

    op spin() {
        while (!ready.load(LOAD)) { }
        return data.load(relaxed);
    }
}
";

fn message_passing(store: &str, load: &str) -> Arc<Model> {
    model(
        &MESSAGE_PASSING
            .replace("STORE", store)
            .replace("LOAD", load),
    )
}

#[test]
fn a_relaxed_flag_lets_a_reader_see_it_raised_and_still_read_the_old_data() {
    let relaxed = message_passing("relaxed", "relaxed");
    assert!(relaxed.is_weak());
    let tree = tree_of(
        &program(&relaxed, &[&["publish(1)"], &["read()"]], &[]),
        true,
    );
    let read: BTreeSet<Value> = returns_of(&tree, 1);
    assert_eq!(
        read,
        [Value::Int(-1), Value::Int(0), Value::Int(1)].into(),
        "the flag unseen, seen with stale data, seen with the data"
    );
    let synchronized = message_passing("release", "acquire");
    let tree = tree_of(
        &program(&synchronized, &[&["publish(1)"], &["read()"]], &[]),
        true,
    );
    assert_eq!(returns_of(&tree, 1), [Value::Int(-1), Value::Int(1)].into());
    // Sequentially consistent, the relaxed model cannot read stale data either.
    let sc = program(&relaxed, &[&["publish(1)"], &["read()"]], &[]).sequentially_consistent();
    assert!(!sc.is_weak());
    assert_eq!(
        returns_of(&tree_of(&sc, true), 1),
        [Value::Int(-1), Value::Int(1)].into()
    );
}

#[test]
fn a_spin_on_a_flag_ends_and_merges_its_stale_turns() {
    for (store, load, expected) in [
        ("relaxed", "relaxed", vec![0, 1]),
        ("release", "acquire", vec![1]),
    ] {
        let m = message_passing(store, load);
        let tree = tree_of(&program(&m, &[&["publish(1)"], &["spin()"]], &[]), true);
        assert!(tree.partial.is_none());
        let expected: BTreeSet<Value> = expected.into_iter().map(Value::Int).collect();
        assert_eq!(returns_of(&tree, 1), expected, "{store}/{load}");
        // A turn that reads the flag down again, having read it down, changes nothing: the
        // spin is a loop edge, not an endless path.
        assert!(tree.stats().loop_edges > 0, "{store}/{load}");
    }
}

#[test]
fn states_merged_by_the_graphs_future_give_the_unfolded_counts() {
    // Loop-free, so the unfolded tree is finite: merging must not change its counts.
    let m = message_passing("relaxed", "relaxed");
    let mut merged_some = false;
    for threads in [
        &[&["publish(1)"][..], &["read()", "read()"]][..],
        &[&["publish(1)", "publish(2)"], &["read()"], &["read()"]],
    ] {
        let p = program(&m, threads, &[]);
        let merged = tree_of(&p, true);
        let unfolded = tree_of(&program(&m, threads, &[]), false);
        let (a, b) = (merged.stats(), unfolded.stats());
        assert_eq!(
            (a.nodes, a.leaves, a.complete, a.max_depth),
            (b.nodes, b.leaves, b.complete, b.max_depth)
        );
        merged_some |= a.graph_nodes < b.graph_nodes;
        // A merged leaf keeps the history of one path to it: compare what the threads saw.
        assert_eq!(results(&merged), results(&unfolded));
    }
    assert!(merged_some, "states were merged");
}

#[test]
fn a_call_under_weak_memory_counts_the_operations_that_returned_before_it_in_happens_before() {
    let relaxed = message_passing("relaxed", "relaxed");
    let synchronized = message_passing("release", "acquire");
    // T0 publishes twice; T1 spins until the flag is up, then calls `read()`: after an
    // acquire of the release flag, T0's first `publish` returned before `read()`; relaxed,
    // nothing orders them.
    let threads: &[&[&str]] = &[&["publish(1)", "publish(2)"], &["spin()", "read()"]];
    let clocks = |m: &Arc<Model>| -> BTreeSet<Vec<u32>> {
        let tree = tree_of(&program(m, threads, &[]), true);
        let mut clocks = BTreeSet::new();
        for (_, leaf, _) in tree.leaves() {
            for event in &leaf.history.events {
                if let CoarseEvent::Call {
                    thread: 1,
                    call,
                    seen,
                } = event
                {
                    if call.op == "read" {
                        clocks.insert(seen.as_deref().expect("a clock").to_vec());
                    }
                }
            }
        }
        clocks
    };
    assert_eq!(clocks(&relaxed), [vec![0, 1]].into());
    // Acquiring the first publish's flag hands over nothing of T0's returns (its marker
    // comes after the flag's store); acquiring the second's hands over the first's return.
    assert_eq!(clocks(&synchronized), [vec![0, 1], vec![1, 1]].into());
}

#[test]
fn a_lock_hands_over_what_was_written_under_it() {
    // Relaxed accesses under a lock: the lock's acquire and release order them.
    let m = model(
        "
object Counter {
    shared int n = 0;
    lock m;
    op inc() { lock(m); int t = n.load(relaxed); n.store(t + 1, relaxed); unlock(m); }
    op get() { lock(m); int t = n.load(relaxed); unlock(m); return t; }
}
",
    );
    assert!(m.is_weak());
    let tree = tree_of(&program(&m, &[&["inc()"], &["inc()"]], &["get()"]), true);
    assert_eq!(
        returns_of(&tree, fgvt_tree::FINAL_LANE),
        [Value::Int(2)].into()
    );
    // Without the lock, an increment is lost.
    let racy = model(
        "
object Counter {
    shared int n = 0;
    op inc() { int t = n.load(relaxed); n.store(t + 1, relaxed); }
    op get() { return n; }
}
",
    );
    let tree = tree_of(&program(&racy, &[&["inc()"], &["inc()"]], &["get()"]), true);
    assert_eq!(
        returns_of(&tree, fgvt_tree::FINAL_LANE),
        [Value::Int(1), Value::Int(2)].into()
    );
}

#[test]
fn regions_and_dcas_read_the_latest_stores() {
    // `atomic` reads the latest value: no stale read, whatever the other accesses declare.
    let m = model(
        "
object Flag {
    shared int data = 0;
    shared bool ready = false;
    op publish(int v) { data.store(v, relaxed); ready.store(true, relaxed); }
    op read() { int r = -1; atomic { if (ready) r = data; } return r; }
    op wait() { await(ready); return data.load(relaxed); }
}
",
    );
    let tree = tree_of(&program(&m, &[&["publish(1)"], &["read()"]], &[]), true);
    assert_eq!(returns_of(&tree, 1), [Value::Int(-1), Value::Int(1)].into());
    // `await` reads the flag's latest store, but synchronizes with nothing the relaxed flag
    // did not publish: the data may still be stale after it.
    let tree = tree_of(&program(&m, &[&["publish(1)"], &["wait()"]], &[]), true);
    assert_eq!(returns_of(&tree, 1), [Value::Int(0), Value::Int(1)].into());
}

#[test]
fn ways_past_the_bound_are_one_bounded_leaf() {
    let m = model(
        "
object Register {
    shared int x = 0;
    op write(int v) { x.store(v, relaxed); }
    op read() { return x.load(relaxed); }
}
",
    );
    let threads: &[&[&str]] = &[&["write(1)", "write(2)", "write(3)"], &["read()"]];
    let all = tree_of(&program(&m, threads, &[]), true);
    assert_eq!(all.stats().bounded, 0);
    assert_eq!(
        returns_of(&all, 1),
        (0..=3).map(Value::Int).collect::<BTreeSet<_>>()
    );
    let bounded = tree_of(&program(&m, threads, &[]).with_max_stale(1), true);
    assert!(bounded.stats().bounded > 0);
    let stale = bounded
        .leaves()
        .find_map(|(_, leaf, _)| leaf.bound.as_deref().cloned());
    assert!(
        matches!(
            &stale,
            Some(Bound::Stale {
                thread: 1,
                max: 2,
                ..
            })
        ),
        "{stale:?}"
    );
}

#[test]
fn a_change_of_orderings_runs_the_test_with_it() {
    let relaxed = message_passing("relaxed", "relaxed");
    let accesses = relaxed.ordered_accesses();
    let flag_store = accesses
        .iter()
        .find(|a| a.access == "store to `ready`")
        .unwrap();
    let flag_load = accesses
        .iter()
        .find(|a| a.access == "load of `ready`")
        .unwrap();
    let threads: &[&[&str]] = &[&["publish(1)"], &["read()"]];
    let changed = |changes: &[(u32, Change)]| {
        let p = program(&relaxed, threads, &[]).with_changes(changes);
        returns_of(&tree_of(&p, true), 1)
    };
    let fixed: BTreeSet<Value> = [Value::Int(-1), Value::Int(1)].into();
    // Release alone or acquire alone is not enough; both are.
    assert_ne!(
        changed(&[(flag_store.site, Change::Order(Order::Release))]),
        fixed
    );
    assert_ne!(
        changed(&[(flag_load.site, Change::Order(Order::Acquire))]),
        fixed
    );
    assert_eq!(
        changed(&[
            (flag_store.site, Change::Order(Order::Release)),
            (flag_load.site, Change::Order(Order::Acquire))
        ]),
        fixed
    );
    // So are fences: release before the flag's store, acquire after its load.
    assert_eq!(
        changed(&[
            (flag_store.site, Change::FenceBefore(Order::Release)),
            (flag_load.site, Change::FenceAfter(Order::Acquire))
        ]),
        fixed
    );
}
