//! Worker threads for the commands that check many tests (`hunt`, `minimize`).

/// Runs `f` on a pool of `jobs` threads (one per core by default).
pub(super) fn with_jobs<T: Send>(
    jobs: Option<usize>,
    f: impl FnOnce() -> T + Send,
) -> miette::Result<T> {
    let jobs = jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .build()
        .map_err(|e| miette::miette!("cannot start {jobs} worker threads: {e}"))?;
    Ok(pool.install(f))
}
