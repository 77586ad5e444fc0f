//! Objects whose operations spawn threads (`fgvt_sync::thread`) in a test of the object: each
//! spawned thread a lane of its own ([`Test::spawns`]), its steps in the tree.

use fgvt_sync::atomic::{AtomicI64, Ordering::SeqCst};
use fgvt_sync::{thread, Arc, Test, Verdict};

/// A counter whose `add_two` adds one itself and one in a thread it spawns and joins; with
/// `LOST`, the helper adds by a load and a store, which the spawner's own add can fall between.
#[derive(Default)]
struct Helped<const LOST: bool>(Arc<AtomicI64>);

#[fgvt_sync::operations]
impl<const LOST: bool> Helped<LOST> {
    pub fn add_two(&self) {
        let n = Arc::clone(&self.0);
        let helper = thread::spawn(move || {
            if LOST {
                let v = n.load(SeqCst);
                n.store(v + 1, SeqCst);
            } else {
                n.fetch_add(1, SeqCst);
            }
        });
        self.0.fetch_add(1, SeqCst);
        helper.join().unwrap();
    }

    pub fn get(&self) -> i64 {
        self.0.load(SeqCst)
    }
}

/// Two threads each `add_two()`, then `get()`: the verdict and the leaves, failing and all.
fn explored<const LOST: bool>(spawns: usize) -> (Verdict, u64, u64) {
    let found = Test::<Helped<LOST>>::new("helped")
        .thread(&["add_two()"])
        .thread(&["add_two()"])
        .finally(&["get()"])
        .spawns(spawns)
        .localize()
        .unwrap();
    let tree = &found.report.tree;
    (found.report.verdict, tree.failing_leaves, tree.leaves)
}

#[test]
fn helpers_that_add_atomically_pass_in_every_run() {
    let (verdict, failing, leaves) = explored::<false>(2);
    assert_eq!(verdict, Verdict::Linearizable);
    assert_eq!(failing, 0);
    // Each add_two is 2 adds and a join by its own lanes: runs interleave the 4 adds at least.
    assert!(leaves >= 6, "{leaves} leaves");
}

#[test]
fn a_helper_whose_add_can_be_lost_fails_in_some_runs() {
    let (verdict, failing, leaves) = explored::<true>(2);
    assert_eq!(verdict, Verdict::NotLinearizable);
    assert!(failing > 0 && failing < leaves, "{failing} of {leaves}");
}

#[test]
fn a_spawn_with_no_room_says_to_make_some() {
    let (verdict, ..) = explored::<false>(1);
    assert_eq!(verdict, Verdict::NotLinearizable);
    let found = Test::<Helped<false>>::new("helped")
        .thread(&["add_two()"])
        .thread(&["add_two()"])
        .spawns(1)
        .localize()
        .unwrap();
    let text = fgvt_sync::report::render_text(&found.report, false);
    assert!(text.contains("make room with `Test::spawns`"), "{text}");
}
