//! Lenient scalar fields for op arguments: a REST query carries every value as text
//! (`?limit=5`, `?force=true`) while an admin tool sends JSON (`{"limit": 5}`); both
//! deserialize into the same typed field.

use serde::de::{self, Deserializer, Visitor};
use std::fmt;
use std::marker::PhantomData;
use std::str::FromStr;

struct Lenient<T>(PhantomData<T>);

impl<'de, T> Visitor<'de> for Lenient<T>
where
    T: FromStr + TryFrom<i64> + TryFrom<u64> + FromBool,
{
    type Value = Option<T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(T::EXPECTING)
    }
    fn visit_none<E: de::Error>(self) -> Result<Option<T>, E> {
        Ok(None)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Option<T>, E> {
        Ok(None)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Option<T>, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Option<T>, E> {
        T::try_from(v).map(Some).map_err(|_| E::custom(format!("{v} is out of range; {}", T::EXPECTING)))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Option<T>, E> {
        T::try_from(v).map(Some).map_err(|_| E::custom(format!("{v} is out of range; {}", T::EXPECTING)))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Option<T>, E> {
        Err(E::custom(format!("{v} is not {}", T::EXPECTING)))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Option<T>, E> {
        T::from_bool(v).map(Some).ok_or_else(|| E::custom(format!("{v} is not {}", T::EXPECTING)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Option<T>, E> {
        v.trim().parse::<T>().map(Some).map_err(|_| E::custom(format!("`{v}` is not {}", T::EXPECTING)))
    }
}

/// What a lenient field accepts besides text and integers.
pub trait FromBool: Sized {
    const EXPECTING: &'static str;
    fn from_bool(_: bool) -> Option<Self> {
        None
    }
}

impl FromBool for i64 {
    const EXPECTING: &'static str = "an integer";
}
impl FromBool for usize {
    const EXPECTING: &'static str = "a non-negative integer";
}

/// `true`/`false` as text or JSON; integers are refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flag(pub bool);

impl FromStr for Flag {
    type Err = ();
    fn from_str(s: &str) -> Result<Flag, ()> {
        match s {
            "true" => Ok(Flag(true)),
            "false" => Ok(Flag(false)),
            _ => Err(()),
        }
    }
}
impl TryFrom<i64> for Flag {
    type Error = ();
    fn try_from(_: i64) -> Result<Flag, ()> {
        Err(())
    }
}
impl TryFrom<u64> for Flag {
    type Error = ();
    fn try_from(_: u64) -> Result<Flag, ()> {
        Err(())
    }
}
impl FromBool for Flag {
    const EXPECTING: &'static str = "true or false";
    fn from_bool(b: bool) -> Option<Flag> {
        Some(Flag(b))
    }
}

/// An optional integer given as a number or as text.
pub fn opt_int<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: FromStr + TryFrom<i64> + TryFrom<u64> + FromBool,
{
    d.deserialize_option(Lenient::<T>(PhantomData))
}

/// An optional boolean given as `true`/`false` or as that text.
pub fn opt_bool<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    Ok(d.deserialize_option(Lenient::<Flag>(PhantomData))?.map(|f| f.0))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[derive(Debug, serde::Deserialize)]
    struct Q {
        #[serde(default, deserialize_with = "super::opt_int")]
        n: Option<i64>,
        #[serde(default, deserialize_with = "super::opt_int")]
        u: Option<usize>,
        #[serde(default, deserialize_with = "super::opt_bool")]
        b: Option<bool>,
    }

    fn q(v: serde_json::Value) -> Result<Q, String> {
        serde_json::from_value(v).map_err(|e| e.to_string())
    }

    #[test]
    fn text_and_json_scalars_read_the_same() {
        let a = q(json!({"n": "5", "u": "7", "b": "true"})).unwrap();
        let b = q(json!({"n": 5, "u": 7, "b": true})).unwrap();
        assert_eq!((a.n, a.u, a.b), (Some(5), Some(7), Some(true)));
        assert_eq!((b.n, b.u, b.b), (Some(5), Some(7), Some(true)));
        let none = q(json!({"n": null})).unwrap();
        assert_eq!((none.n, none.u, none.b), (None, None, None));
    }

    #[test]
    fn malformed_scalars_say_what_was_expected() {
        assert!(q(json!({"n": "five"})).unwrap_err().contains("is not an integer"));
        assert!(q(json!({"n": 1.5})).unwrap_err().contains("is not an integer"));
        assert!(q(json!({"u": -1})).unwrap_err().contains("out of range"));
        assert!(q(json!({"b": 1})).unwrap_err().contains("true or false"));
        assert!(q(json!({"b": "yes"})).unwrap_err().contains("true or false"));
        assert!(q(json!({"n": [1]})).is_err());
    }
}
