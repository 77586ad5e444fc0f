/// Counts allocations so that `--max-memory` can stop a run before the kernel does.
#[global_allocator]
static ALLOCATOR: fgvt::memory::Counting = fgvt::memory::Counting;

fn main() -> std::process::ExitCode {
    fgvt::cli::main()
}
