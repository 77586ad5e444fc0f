//! Workers that run a test's executions beside the search (`Test::jobs`, `Model::jobs`)
//! change no report: under weak memory with its fix search, and with `static`s, which only
//! the search's thread runs.

use fgvt_sync::atomic::{AtomicUsize, Ordering};
use fgvt_sync::cell::UnsafeCell;
use fgvt_sync::{thread, Model, Test, Verdict};

use crate::weak::Publish;

/// The report as text, and as JSON without its timing.
fn texts(report: &fgvt_reports::LocalizeReport) -> (String, String) {
    let json: Vec<String> = (fgvt_reports::render_json(report).lines())
        .filter(|line| !line.trim_start().starts_with("\"elapsed_ms\""))
        .map(str::to_string)
        .collect();
    (fgvt_reports::render_text(report, false), json.join("\n"))
}

#[test]
fn a_weak_memory_report_and_its_fix_are_the_same_with_workers() {
    let localize = |jobs: usize| {
        // Two values published through a `Relaxed` flag, read by two readers.
        let found = Test::<Publish<false, false>>::new("publish_jobs")
            .thread(&["publish(1)", "publish(2)"])
            .thread(&["read()", "read()"])
            .thread(&["read()"])
            .jobs(jobs)
            .localize()
            .unwrap();
        texts(&found.report)
    };
    let one = localize(1);
    assert!(one.0.contains("NOT LINEARIZABLE"), "{}", one.0);
    assert!(
        one.0.contains("Release"),
        "the fix strengthens the flag: {}",
        one.0
    );
    for jobs in [2, 4] {
        assert_eq!(localize(jobs), one, "{jobs} jobs");
    }
}

/// A counter in a `static` whose increments skip their lock: a data race in some runs.
struct Racy {
    count: UnsafeCell<usize>,
    calls: AtomicUsize,
}

unsafe impl Sync for Racy {}

impl Racy {
    const fn new() -> Racy {
        Racy {
            count: UnsafeCell::const_new(0),
            calls: AtomicUsize::const_new(0),
        }
    }

    fn inc(&self) {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.count.with_mut(|c| unsafe { *c += 1 });
    }
}

static RACY: Racy = Racy::new();

#[test]
fn a_static_is_run_on_the_search_thread_alone_and_reports_the_same() {
    let localize = |jobs: usize| {
        let found = Model::new()
            .name("static_jobs")
            .jobs(jobs)
            .localize(|| {
                let t = thread::spawn(|| RACY.inc());
                RACY.inc();
                t.join().unwrap();
            })
            .unwrap();
        (found.report.verdict, texts(&found.report))
    };
    let one = localize(1);
    assert_eq!(one.0, Verdict::NotLinearizable, "{}", (one.1).0);
    assert!((one.1).0.contains("data race"), "{}", (one.1).0);
    for jobs in [2, 4] {
        assert_eq!(localize(jobs), one, "{jobs} jobs");
    }
}

static ADDS: AtomicUsize = AtomicUsize::const_new(0);

#[test]
fn a_static_atomic_counts_each_run_alone_with_workers() {
    // Were two runs to share the static at once, one would see the other's adds (or its
    // reset, at its first access) and its assertion fail.
    let localize = |jobs: usize| {
        let found = Model::new()
            .name("static_adds_jobs")
            .jobs(jobs)
            .localize(|| {
                let threads: Vec<_> = (0..2)
                    .map(|_| {
                        thread::spawn(|| {
                            ADDS.fetch_add(1, Ordering::SeqCst);
                            ADDS.fetch_add(1, Ordering::SeqCst);
                        })
                    })
                    .collect();
                ADDS.fetch_add(1, Ordering::SeqCst);
                ADDS.fetch_add(1, Ordering::SeqCst);
                for t in threads {
                    t.join().unwrap();
                }
                assert_eq!(ADDS.load(Ordering::SeqCst), 6);
            })
            .unwrap();
        (found.report.verdict, texts(&found.report))
    };
    let one = localize(1);
    assert_eq!(one.0, Verdict::Linearizable, "{}", (one.1).0);
    assert_eq!(localize(4), one);
}

#[test]
fn a_preemption_bounded_model_reports_the_same_with_workers() {
    // A receiver that polls until the sender's flag is up, as loom suites write it; a
    // bounded search opens a state once per turn, so workers must not let go of one.
    let localize = |jobs: usize| {
        let found = Model::new()
            .name("bounded_jobs")
            .preemption_bound(2)
            .jobs(jobs)
            .localize(|| {
                let flag = std::sync::Arc::new(AtomicUsize::new(0));
                let seen = std::sync::Arc::clone(&flag);
                let t = thread::spawn(move || loop {
                    match seen.load(Ordering::Acquire) {
                        0 => fgvt_sync::hint::spin_loop(),
                        v => break v,
                    }
                });
                flag.store(1, Ordering::Release);
                flag.store(2, Ordering::Release);
                assert!(t.join().unwrap() >= 1);
            })
            .unwrap();
        (found.report.verdict, texts(&found.report))
    };
    let one = localize(1);
    assert_eq!(one.0, Verdict::Linearizable, "{}", (one.1).0);
    for jobs in [2, 4] {
        assert_eq!(localize(jobs), one, "{jobs} jobs");
    }
}
