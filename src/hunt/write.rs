//! Writing a test as a `failing.json` that loads from where it is written.
//!
//! The `object` (and a model `spec`) of a test are paths relative to the test file, so a test
//! written somewhere else than the file it came from needs them rewritten: [`ModelRefs`] keeps
//! them as written together with the directory they are relative to.

use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

use super::Matrix;
use fgvt_tree::Call;

/// The `object` and `spec` values of a hunt file or test, and the directory they are
/// relative to.
#[derive(Clone, Debug)]
pub struct ModelRefs {
    /// `object` as written: `file.fgv` or `file.fgv#Name`, or a Rust object's name.
    pub object: String,
    /// Whether `object` is a model file (relative to `base`) rather than a Rust object's name.
    pub object_is_file: bool,
    /// `spec` as written, if any: `self`, a built-in name, a Rust spec type's name, or
    /// `file.fgv#Name`.
    pub spec: Option<String>,
    /// The directory of the file they were read from.
    pub base: PathBuf,
}

impl ModelRefs {
    /// The references of a model's test or hunt file at `path`.
    pub fn model(object: &str, spec: Option<&str>, path: &Path) -> ModelRefs {
        ModelRefs {
            object: object.to_string(),
            object_is_file: true,
            spec: spec.map(str::to_string),
            base: path.parent().map(Path::to_path_buf).unwrap_or_default(),
        }
    }

    /// The references of a Rust object's test or hunt file at `path`: the object is a name.
    pub fn rust(object: &str, spec: Option<&str>, path: &Path) -> ModelRefs {
        ModelRefs {
            object_is_file: false,
            ..ModelRefs::model(object, spec, path)
        }
    }

    /// `object` relative to `dir` (where the written test goes); a Rust object's name is kept.
    pub fn object_from(&self, dir: &Path) -> String {
        self.object_at(Some(dir))
    }

    /// `spec` relative to `dir`: model files are rewritten, names kept.
    pub fn spec_from(&self, dir: &Path) -> Option<String> {
        self.spec_at(Some(dir))
    }

    /// `object` relative to `dir`, or absolute without one.
    fn object_at(&self, dir: Option<&Path>) -> String {
        if self.object_is_file {
            relocate(&self.object, &self.base, dir)
        } else {
            self.object.clone()
        }
    }

    /// `spec` relative to `dir`, or absolute without one.
    fn spec_at(&self, dir: Option<&Path>) -> Option<String> {
        self.spec.as_ref().map(|s| {
            if s.contains(".fgv") {
                relocate(s, &self.base, dir)
            } else {
                s.clone()
            }
        })
    }
}

/// A `failing.json` holding `matrix`, loadable from a file in `dir`.
pub fn render_test(
    matrix: &Matrix,
    refs: &ModelRefs,
    dir: &Path,
    description: Option<&str>,
    seed: Option<u64>,
) -> String {
    render_test_at(matrix, refs, Some(dir), description, seed)
}

/// A `failing.json` holding `matrix` with absolute model paths, loadable wherever it is put:
/// for a test printed where fgvt cannot tell which file it ends up in.
pub fn render_test_anywhere(
    matrix: &Matrix,
    refs: &ModelRefs,
    description: Option<&str>,
    seed: Option<u64>,
) -> String {
    render_test_at(matrix, refs, None, description, seed)
}

/// [`render_test`], with paths absolute when there is no `dir`.
fn render_test_at(
    matrix: &Matrix,
    refs: &ModelRefs,
    dir: Option<&Path>,
    description: Option<&str>,
    seed: Option<u64>,
) -> String {
    let string = |s: &str| serde_json::to_string(s).expect("strings serialize");
    let calls = |calls: &[Call]| {
        format!(
            "[{}]",
            calls
                .iter()
                .map(|c| string(&c.to_string()))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let mut out = String::from("{\n");
    if let Some(d) = description {
        let _ = writeln!(out, "  \"description\": {},", string(d));
    }
    let _ = writeln!(out, "  \"object\": {},", string(&refs.object_at(dir)));
    if let Some(spec) = refs.spec_at(dir) {
        let _ = writeln!(out, "  \"spec\": {},", string(&spec));
    }
    if let Some(seed) = seed {
        let _ = writeln!(out, "  \"seed\": {seed},");
    }
    let _ = writeln!(out, "  \"init\": {},", calls(&matrix.init));
    let threads: Vec<String> = matrix.threads.iter().map(|t| calls(t)).collect();
    let _ = writeln!(out, "  \"threads\": [{}],", threads.join(", "));
    let _ = writeln!(out, "  \"final\": {}", calls(&matrix.finals));
    out.push_str("}\n");
    out
}

/// `reference` (`file.fgv#Name`, relative to `base`) made relative to `dir`, or absolute
/// without one.
fn relocate(reference: &str, base: &Path, dir: Option<&Path>) -> String {
    let (file, name) = match reference.split_once('#') {
        Some((file, name)) => (file, Some(name)),
        None => (reference, None),
    };
    let target = resolved(&base.join(file));
    let path = dir
        .and_then(|dir| relative(&resolved(dir), &target))
        .unwrap_or(target);
    // Forward slashes keep the file the same on every platform (Windows accepts them).
    let parts: Vec<String> = path
        .components()
        .map(|c| c.as_os_str().to_string_lossy().to_string())
        .collect();
    let mut text = if path.is_absolute() {
        path.display().to_string()
    } else {
        parts.join("/")
    };
    if let Some(name) = name {
        text.push('#');
        text.push_str(name);
    }
    text
}

/// An absolute form of `path` without symbolic links when it exists (so that `/tmp` and its
/// real directory compare equal), absolute otherwise.
fn resolved(path: &Path) -> PathBuf {
    let path = if path.as_os_str().is_empty() {
        Path::new(".")
    } else {
        path
    };
    std::fs::canonicalize(path)
        .or_else(|_| std::path::absolute(path))
        .unwrap_or_else(|_| path.to_path_buf())
}

/// The relative path from directory `from` to `to` (both absolute); `None` if they share no
/// directory but the root (`/tmp/t.json` and `/home/me/m.fgv`): an absolute path then
/// survives moving the test better than a climb to the root.
fn relative(from: &Path, to: &Path) -> Option<PathBuf> {
    let from: Vec<Component> = from.components().collect();
    let to: Vec<Component> = to.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let root = from
        .iter()
        .take_while(|c| matches!(c, Component::Prefix(_) | Component::RootDir))
        .count();
    if common <= root && common < from.len() {
        return None;
    }
    let mut out = PathBuf::new();
    for _ in common..from.len() {
        out.push("..");
    }
    for c in &to[common..] {
        out.push(c);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_climb_and_descend() {
        assert_eq!(
            relative(Path::new("/a/b/c"), Path::new("/a/d/m.fgv")),
            Some(PathBuf::from("../../d/m.fgv"))
        );
        assert_eq!(
            relative(Path::new("/a"), Path::new("/a/m.fgv")),
            Some(PathBuf::from("m.fgv"))
        );
        assert_eq!(
            relative(Path::new("/tmp/x"), Path::new("/work/m.fgv")),
            None
        );
        assert_eq!(
            relative(Path::new("/"), Path::new("/work/m.fgv")),
            Some(PathBuf::from("work/m.fgv"))
        );
    }

    #[test]
    fn a_written_test_points_at_the_model_from_its_own_directory() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("models")).unwrap();
        std::fs::create_dir_all(root.path().join("out/deep")).unwrap();
        std::fs::write(root.path().join("models/m.fgv"), "").unwrap();
        let refs = ModelRefs::model(
            "m.fgv#Cell",
            Some("m.fgv#Spec"),
            &root.path().join("models/hunt.json"),
        );
        assert_eq!(
            refs.object_from(&root.path().join("out/deep")),
            "../../models/m.fgv#Cell"
        );
        assert_eq!(
            refs.spec_from(&root.path().join("models")).as_deref(),
            Some("m.fgv#Spec")
        );
        let named = ModelRefs {
            spec: Some("set".into()),
            ..refs
        };
        assert_eq!(named.spec_from(root.path()).as_deref(), Some("set"));
    }

    #[test]
    fn the_rendered_test_is_valid_json_with_every_part() {
        let m = Matrix {
            init: vec![Call::new(
                "write",
                vec![fgvt_tree::Value::Int(0), fgvt_tree::Value::Int(1)],
            )],
            threads: vec![
                vec![Call::new("read", vec![])],
                vec![Call::new("put", vec![fgvt_tree::Value::Str("a\"b".into())])],
            ],
            finals: vec![],
        };
        let refs = ModelRefs::model("m.fgv", None, Path::new("/x/test.json"));
        let text = render_test(&m, &refs, Path::new("/x"), Some("found"), Some(7));
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(json["object"], "m.fgv");
        assert_eq!(json["seed"], 7);
        let anywhere = render_test_anywhere(&m, &refs, None, None);
        let json: serde_json::Value = serde_json::from_str(&anywhere).unwrap();
        let object = json["object"].as_str().unwrap();
        assert!(Path::new(object).is_absolute(), "{object}");
        assert!(object.ends_with("m.fgv"), "{object}");
        assert_eq!(json["threads"][1][0], "put(\"a\\\"b\")");
        assert_eq!(json["init"][0], "write(0, 1)");
    }
}
