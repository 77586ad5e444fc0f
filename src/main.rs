fn main() -> std::process::ExitCode {
    fgvt::cli::main()
}
