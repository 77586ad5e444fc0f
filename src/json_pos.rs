//! Finding where a value sits in a JSON text, so that errors about a test case can point at
//! the exact string (`threads[0][1]`) rather than at the file as a whole.
//!
//! `serde_json` reports positions only for syntax errors; once a document has parsed, the
//! positions are gone. This module walks the text again, just far enough to find the value at
//! a path. It assumes the text is valid JSON (it is only used after `serde_json` accepted it).

use std::fmt;

/// One step of a path into a JSON document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathStep {
    /// A member of an object.
    Key(String),
    /// An element of an array.
    Index(usize),
}

/// A path into a JSON document, printed like `threads[0][1]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JsonPath(pub Vec<PathStep>);

impl JsonPath {
    /// The path one step further down.
    pub fn key(&self, key: &str) -> JsonPath {
        let mut steps = self.0.clone();
        steps.push(PathStep::Key(key.to_string()));
        JsonPath(steps)
    }

    /// The path to element `index` of the array at this path.
    pub fn index(&self, index: usize) -> JsonPath {
        let mut steps = self.0.clone();
        steps.push(PathStep::Index(index));
        JsonPath(steps)
    }
}

impl fmt::Display for JsonPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, step) in self.0.iter().enumerate() {
            match step {
                PathStep::Key(k) if i == 0 => write!(f, "{k}")?,
                PathStep::Key(k) => write!(f, ".{k}")?,
                PathStep::Index(n) => write!(f, "[{n}]")?,
            }
        }
        Ok(())
    }
}

/// The byte range of the value at `path` in `text`, if there is one.
pub fn locate(text: &str, path: &JsonPath) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut pos = skip_ws(bytes, 0);
    for step in &path.0 {
        pos = match step {
            PathStep::Key(key) => find_member(text, pos, key)?,
            PathStep::Index(index) => find_element(bytes, pos, *index)?,
        };
    }
    Some((pos, value_end(bytes, pos)?))
}

fn skip_ws(bytes: &[u8], mut pos: usize) -> usize {
    while pos < bytes.len() && bytes[pos].is_ascii_whitespace() {
        pos += 1;
    }
    pos
}

/// The position just past the value starting at `pos`.
fn value_end(bytes: &[u8], pos: usize) -> Option<usize> {
    match *bytes.get(pos)? {
        b'"' => string_end(bytes, pos),
        open @ (b'{' | b'[') => {
            let close = if open == b'{' { b'}' } else { b']' };
            let mut depth = 0usize;
            let mut i = pos;
            while i < bytes.len() {
                match bytes[i] {
                    b'"' => {
                        i = string_end(bytes, i)?;
                        continue;
                    }
                    b if b == open => depth += 1,
                    b if b == close => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            None
        }
        _ => {
            let mut i = pos;
            while i < bytes.len()
                && !matches!(bytes[i], b',' | b'}' | b']')
                && !bytes[i].is_ascii_whitespace()
            {
                i += 1;
            }
            Some(i)
        }
    }
}

/// The position just past the string literal starting at `pos`.
fn string_end(bytes: &[u8], pos: usize) -> Option<usize> {
    let mut i = pos + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

fn find_member(text: &str, pos: usize, key: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    if bytes.get(pos) != Some(&b'{') {
        return None;
    }
    let mut i = skip_ws(bytes, pos + 1);
    while bytes.get(i) == Some(&b'"') {
        let key_end = string_end(bytes, i)?;
        let name: String = serde_json::from_str(&text[i..key_end]).ok()?;
        i = skip_ws(bytes, key_end);
        if bytes.get(i) != Some(&b':') {
            return None;
        }
        let value = skip_ws(bytes, i + 1);
        if name == key {
            return Some(value);
        }
        i = skip_ws(bytes, value_end(bytes, value)?);
        if bytes.get(i) == Some(&b',') {
            i = skip_ws(bytes, i + 1);
        }
    }
    None
}

fn find_element(bytes: &[u8], pos: usize, index: usize) -> Option<usize> {
    if bytes.get(pos) != Some(&b'[') {
        return None;
    }
    let mut i = skip_ws(bytes, pos + 1);
    for _ in 0..index {
        if bytes.get(i) == Some(&b']') {
            return None;
        }
        i = skip_ws(bytes, value_end(bytes, i)?);
        if bytes.get(i) != Some(&b',') {
            return None;
        }
        i = skip_ws(bytes, i + 1);
    }
    (bytes.get(i) != Some(&b']')).then_some(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = r#"{
  "object": "a.fgv",
  "threads": [["write(0, 2)", "write(1, \"x]\")"], [ "read()" ]],
  "final": []
}"#;

    fn path(steps: &[PathStep]) -> JsonPath {
        JsonPath(steps.to_vec())
    }

    #[test]
    fn finds_nested_elements_past_tricky_strings() {
        use PathStep::*;
        let p = path(&[Key("threads".into()), Index(1), Index(0)]);
        let (s, e) = locate(DOC, &p).unwrap();
        assert_eq!(&DOC[s..e], "\"read()\"");
        assert_eq!(p.to_string(), "threads[1][0]");
        let (s, e) = locate(DOC, &path(&[Key("threads".into()), Index(0), Index(1)])).unwrap();
        assert_eq!(&DOC[s..e], r#""write(1, \"x]\")""#);
        let (s, e) = locate(DOC, &path(&[Key("final".into())])).unwrap();
        assert_eq!(&DOC[s..e], "[]");
    }

    #[test]
    fn missing_paths_are_none() {
        use PathStep::*;
        assert!(locate(DOC, &path(&[Key("init".into())])).is_none());
        assert!(locate(DOC, &path(&[Key("threads".into()), Index(2)])).is_none());
        assert!(locate(DOC, &path(&[Key("final".into()), Index(0)])).is_none());
    }
}
