//! A path-tracking view of a `serde_json::Value`, so that every refusal names
//! the place in the document that caused it.

use crate::error::LoadError;
use serde_json::Value;

/// A JSON value together with its path in the document.
#[derive(Clone)]
pub(crate) struct J<'a> {
    pub v: &'a Value,
    pub path: String,
}

pub(crate) type R<T> = Result<T, LoadError>;

impl<'a> J<'a> {
    pub fn root(v: &'a Value) -> Self {
        J {
            v,
            path: String::new(),
        }
    }

    pub fn err<T>(&self, msg: impl Into<String>) -> R<T> {
        Err(LoadError::new(self.path.clone(), msg))
    }

    fn child_path(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_string()
        } else {
            format!("{}.{}", self.path, key)
        }
    }

    /// A required attribute.
    pub fn get(&self, key: &str) -> R<J<'a>> {
        match self.v {
            Value::Object(m) => match m.get(key) {
                Some(v) => Ok(J {
                    v,
                    path: self.child_path(key),
                }),
                None => self.err(format!("missing attribute \"{key}\"")),
            },
            _ => self.err(format!("expected an object (looking for \"{key}\")")),
        }
    }

    /// An optional attribute; `null` counts as absent.
    pub fn opt(&self, key: &str) -> Option<J<'a>> {
        match self.v {
            Value::Object(m) => match m.get(key) {
                Some(Value::Null) | None => None,
                Some(v) => Some(J {
                    v,
                    path: self.child_path(key),
                }),
            },
            _ => None,
        }
    }

    pub fn arr(&self) -> R<Vec<J<'a>>> {
        match self.v {
            Value::Array(a) => Ok(a
                .iter()
                .enumerate()
                .map(|(i, v)| J {
                    v,
                    path: format!("{}[{}]", self.path, i),
                })
                .collect()),
            _ => self.err("expected an array"),
        }
    }

    /// An optional array attribute; absent or null gives an empty list.
    pub fn opt_arr(&self, key: &str) -> R<Vec<J<'a>>> {
        match self.opt(key) {
            Some(j) => j.arr(),
            None => Ok(Vec::new()),
        }
    }

    pub fn str(&self) -> R<&'a str> {
        match self.v {
            Value::String(s) => Ok(s),
            _ => self.err("expected a string"),
        }
    }

    pub fn u64(&self) -> R<u64> {
        match self.v.as_u64() {
            Some(n) => Ok(n),
            None => self.err("expected a non-negative integer"),
        }
    }

    pub fn i64(&self) -> R<i64> {
        match self.v.as_i64() {
            Some(n) => Ok(n),
            None => self.err("expected an integer"),
        }
    }

    pub fn bool(&self) -> R<bool> {
        match self.v {
            Value::Bool(b) => Ok(*b),
            _ => self.err("expected a boolean"),
        }
    }

    /// A boolean flag that may also be written as an integer (`0` / `1`),
    /// as some compilers write a field's signedness; BMv2 reads it with
    /// JSON-to-bool conversion, so any non-zero integer is `true`.
    pub fn flag(&self) -> R<bool> {
        match self.v {
            Value::Bool(b) => Ok(*b),
            Value::Number(n) if n.is_i64() || n.is_u64() => Ok(n.as_i64() != Some(0)),
            _ => self.err("expected a boolean or an integer (0 / 1)"),
        }
    }

    pub fn opt_bool(&self, key: &str, default: bool) -> R<bool> {
        match self.opt(key) {
            Some(j) => j.bool(),
            None => Ok(default),
        }
    }

    pub fn name(&self) -> R<&'a str> {
        self.get("name")?.str()
    }

    /// A 2-tuple of strings, e.g. a field reference `["ipv4", "ttl"]`.
    pub fn pair(&self) -> R<(&'a str, &'a str)> {
        let a = self.arr()?;
        if a.len() != 2 {
            return self.err("expected a 2-element array");
        }
        Ok((a[0].str()?, a[1].str()?))
    }

    /// A `hexstr` value (`"0x1f"`, `"-0x1"`; decimal also accepted).
    pub fn hexstr(&self) -> R<i128> {
        match self.v {
            Value::String(s) => match parse_hexstr(s) {
                Some(v) => Ok(v),
                None => self.err(format!("bad hexstr {s:?} (or wider than 128 bits)")),
            },
            Value::Number(_) => match self.v.as_i64() {
                Some(n) => Ok(n as i128),
                None => self.err("expected an integer"),
            },
            _ => self.err("expected a hexstr"),
        }
    }
}

/// Parses BMv2's hexstr notation. Values up to 128 bits (as bit patterns) are
/// accepted; leading zeros do not count.
pub(crate) fn parse_hexstr(s: &str) -> Option<i128> {
    let (neg, body) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let v: u128 = if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        let h = h.trim_start_matches('0');
        if h.is_empty() {
            0
        } else if h.len() > 32 {
            return None;
        } else {
            u128::from_str_radix(h, 16).ok()?
        }
    } else {
        if body.is_empty() || !body.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        body.parse::<u128>().ok()?
    };
    let v = v as i128;
    Some(if neg { v.wrapping_neg() } else { v })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hexstr_forms() {
        assert_eq!(parse_hexstr("0x0a"), Some(10));
        assert_eq!(parse_hexstr("-0x1"), Some(-1));
        assert_eq!(
            parse_hexstr("0x00000000000000000000000000000000000001"),
            Some(1)
        );
        assert_eq!(parse_hexstr("12"), Some(12));
        assert_eq!(parse_hexstr("0xg"), None);
        assert_eq!(parse_hexstr("0x1ffffffffffffffffffffffffffffffff"), None);
        assert_eq!(
            parse_hexstr("0xffffffffffffffffffffffffffffffff"),
            Some(u128::MAX as i128)
        );
    }

    #[test]
    fn paths_in_errors() {
        let v: Value = serde_json::from_str(r#"{"a":[{"b":1},{"c":"x"}]}"#).unwrap();
        let r = J::root(&v);
        let a = r.get("a").unwrap().arr().unwrap();
        let e = a[1].get("b").err().unwrap();
        assert_eq!(e.to_string(), "a[1]: missing attribute \"b\"");
        let e = a[1].get("c").unwrap().u64().err().unwrap();
        assert_eq!(e.to_string(), "a[1].c: expected a non-negative integer");
    }
}
