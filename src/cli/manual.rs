//! `fgvt completions` and `fgvt man`: shell completion scripts and manual pages, generated
//! from the same clap definitions that parse the command line, so they never drift from it.
//! Nothing installs them; README's "Completions and the manual" says where each shell and
//! `man` look for them.

use std::path::Path;

use clap::CommandFactory;
use miette::IntoDiagnostic;

use super::output::{self, Exit};
use super::{Cli, CompletionsArgs, ManArgs};

/// The name the scripts complete and the pages document: the binary's.
const BIN: &str = "fgvt";

/// Prints (or writes to `-o`) the completion script for the shell asked for.
pub fn completions(args: &CompletionsArgs) -> miette::Result<Exit> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), BIN, &mut script);
    write(args.output.as_deref(), &script)?;
    Ok(Exit::Ok)
}

/// Prints (or writes to `-o`) the manual page of `fgvt`, or, with `--dir`, writes one page per
/// command into that directory: `fgvt.1`, `fgvt-localize.1`, …
pub fn man(args: &ManArgs) -> miette::Result<Exit> {
    let Some(dir) = &args.dir else {
        let page = page(Cli::command())?;
        write(args.output.as_deref(), &page)?;
        return Ok(Exit::Ok);
    };
    std::fs::create_dir_all(dir)
        .into_diagnostic()
        .map_err(|e| e.wrap_err(format!("{}: cannot create the directory", dir.display())))?;
    for (name, page) in pages()? {
        output::write_atomically(&dir.join(name), &page)?;
    }
    Ok(Exit::Ok)
}

/// Every page of the manual, by file name: the program's, then each visible subcommand's.
pub fn pages() -> miette::Result<Vec<(String, Vec<u8>)>> {
    // Built, each subcommand knows its display name (`fgvt-localize`), which names its page.
    let mut cli = Cli::command().disable_help_subcommand(true);
    cli.build();
    let subcommands: Vec<clap::Command> = (cli.get_subcommands())
        .filter(|s| !s.is_hide_set())
        .cloned()
        .collect();
    let mut pages = Vec::new();
    for command in std::iter::once(cli).chain(subcommands) {
        let man = clap_mangen::Man::new(command.clone());
        pages.push((man.get_filename(), page(command)?));
    }
    Ok(pages)
}

/// One command's manual page, as roff.
fn page(command: clap::Command) -> miette::Result<Vec<u8>> {
    let mut page = Vec::new();
    // Every page's footer names the program, not the subcommand.
    let source = format!("{BIN} {}", env!("CARGO_PKG_VERSION"));
    clap_mangen::Man::new(command)
        .source(source)
        .manual("fgvt manual")
        .render(&mut page)
        .into_diagnostic()?;
    Ok(page)
}

/// `bytes` to the file `path` (atomically; `-` is standard output), or to standard output.
fn write(path: Option<&Path>, bytes: &[u8]) -> miette::Result<()> {
    output::write_atomically(path.unwrap_or(Path::new("-")), bytes)
}
