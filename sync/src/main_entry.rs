//! The binary entry point: [`main!`](crate::main) turns Rust objects into a program that
//! localizes the usual test files, as `fgvt localize` does for models.

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;

use serde::Deserialize;

use crate::object::Object;
use crate::test::{Localized, Test};

/// A test file, as `fgvt localize` reads them: the object by name, serial `init`, the threads'
/// calls, serial `final`. Only the spec `self` is known for Rust objects so far.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestFile {
    /// What the test is about (shown by nobody; kept for the reader of the file).
    #[serde(default)]
    pub description: Option<String>,
    /// The object's name, as given to `main!`.
    pub object: String,
    /// The spec: `self`.
    #[serde(default)]
    pub spec: Option<String>,
    /// Serial calls before the threads.
    #[serde(default)]
    pub init: Vec<String>,
    /// Each thread's calls.
    pub threads: Vec<Vec<String>>,
    /// Serial calls after the threads.
    #[serde(default, rename = "final")]
    pub finals: Vec<String>,
}

/// Localizes `file`'s test on `O`: the test built from the file, localized.
pub fn localize_file<O: Object>(name: &str, file: &TestFile) -> Result<Localized, String> {
    fn strs(calls: &[String]) -> Vec<&str> {
        calls.iter().map(String::as_str).collect()
    }
    let program = std::env::args().next().unwrap_or_else(|| "program".into());
    let mut test = Test::<O>::new(name)
        .reproduce_with(&format!("{program} localize {name}"))
        .try_init(&strs(&file.init))?
        .try_finally(&strs(&file.finals))?;
    for thread in &file.threads {
        test = test.try_thread(&strs(thread))?;
    }
    test.localize().map_err(|e| e.to_string())
}

/// How `main!` localizes a test file on one object: [`localize_file`] for that object.
pub type LocalizeFile = fn(&str, &TestFile) -> Result<Localized, String>;

/// Runs the program: `localize FILE`. `objects` names each object a file may ask for, with
/// how to localize a test on it. Exit codes as `fgvt`'s: 0 linearizable, 1 not, 2 bad input,
/// 3 inconclusive (a limit was hit).
pub fn run(objects: &[(&str, LocalizeFile)]) -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = || {
        let names: Vec<&str> = objects.iter().map(|(n, _)| *n).collect();
        eprintln!(
            "usage: localize FILE.json\n  (objects: {})",
            names.join(", ")
        );
        ExitCode::from(2)
    };
    let [command, path] = args.as_slice() else {
        return usage();
    };
    if command != "localize" {
        return usage();
    }
    let path = Path::new(path);
    let fail = |message: String| {
        eprintln!("error: {}: {message}", path.display());
        ExitCode::from(2)
    };
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => return fail(format!("cannot read it ({e}); check the path")),
    };
    let file: TestFile = match serde_json::from_str(&text) {
        Ok(f) => f,
        Err(e) => {
            return fail(format!(
                "{}:{}: {e} (a test file has \"object\", \"init\", \"threads\" and \"final\")",
                e.line(),
                e.column()
            ))
        }
    };
    if let Some(spec) = file.spec.as_deref().filter(|s| *s != "self") {
        return fail(format!(
            "spec `{spec}`: a Rust object is checked against its own serial runs, write \"spec\": \"self\""
        ));
    }
    let Some((_, localize)) = objects.iter().find(|(n, _)| *n == file.object) else {
        let names: Vec<&str> = objects.iter().map(|(n, _)| *n).collect();
        return fail(format!(
            "unknown object `{}`; this program has: {}",
            file.object,
            names.join(", ")
        ));
    };
    let name = path.display().to_string();
    match localize(&name, &file) {
        Ok(found) => {
            let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
            print!("{}", fgvt_reports::render_text(&found.report, color));
            let verdict = found.report.verdict;
            // The process ends here: freeing a tree of a million nodes would only delay it.
            std::mem::forget(found);
            match verdict {
                fgvt_reports::Verdict::Linearizable => ExitCode::SUCCESS,
                fgvt_reports::Verdict::NotLinearizable => ExitCode::from(1),
                fgvt_reports::Verdict::Inconclusive => ExitCode::from(3),
            }
        }
        Err(message) => fail(message),
    }
}

/// A `main` for Rust objects: `fgvt_sync::main!(PairSnapshot, FixedPairSnapshot);` makes a
/// program whose `localize FILE.json` runs the file's test on the object it names.
#[macro_export]
macro_rules! main {
    ($($object:ty),+ $(,)?) => {
        fn main() -> ::std::process::ExitCode {
            $crate::main_entry::run(&[
                $((
                    stringify!($object),
                    $crate::main_entry::localize_file::<$object> as $crate::main_entry::LocalizeFile,
                )),+
            ])
        }
    };
}
