//! `text_enum!`: a state enum stored and sent as its text (`pending`, `running`, …) —
//! `as_str`, `Display`, `Serialize` and the SQLite conversions from one list of variants.
//! With `other Variant`, text no variant names is kept in `Variant(String)` (a state a
//! newer hal0 or Hermes wrote is shown rather than lost); without it, such text is refused.

/// Define `$name` with `Variant = "text"` pairs (see the module doc).
#[macro_export]
macro_rules! text_enum {
    ($(#[$m:meta])* pub enum $name:ident { $($(#[$vm:meta])* $v:ident = $s:literal),+ $(,)? } other $other:ident) => {
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub enum $name { $($(#[$vm])* $v,)+ $other(String) }
        impl $name {
            pub fn as_str(&self) -> &str {
                match self { $($name::$v => $s,)+ $name::$other(s) => s }
            }
            /// The variant `s` names, or `Other` holding it.
            pub fn parse(s: &str) -> $name {
                match s { $($s => $name::$v,)+ other => $name::$other(other.to_string()) }
            }
        }
        impl rusqlite::types::FromSql for $name {
            fn column_result(v: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<$name> {
                Ok($name::parse(v.as_str()?))
            }
        }
        $crate::text_enum!(@common $name);
    };
    ($(#[$m:meta])* pub enum $name:ident { $($(#[$vm:meta])* $v:ident = $s:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum $name { $($(#[$vm])* $v,)+ }
        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$v,)+];
            pub fn as_str(&self) -> &'static str {
                match self { $($name::$v => $s,)+ }
            }
            /// The variant `s` names.
            pub fn from_text(s: &str) -> Option<$name> {
                match s { $($s => Some($name::$v),)+ _ => None }
            }
        }
        impl rusqlite::types::FromSql for $name {
            fn column_result(v: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<$name> {
                let s = v.as_str()?;
                $name::from_text(s).ok_or_else(|| rusqlite::types::FromSqlError::Other(format!("unknown {} `{s}`", stringify!($name)).into()))
            }
        }
        $crate::text_enum!(@common $name);
    };
    (@common $name:ident) => {
        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }
        impl rusqlite::ToSql for $name {
            fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
                Ok(self.as_str().into())
            }
        }
    };
}

#[cfg(test)]
mod tests {
    crate::text_enum! {
        pub enum Open { A = "a", B = "b_b" } other Other
    }
    crate::text_enum! {
        pub enum Closed { X = "x", Y = "y" }
    }

    #[test]
    fn text_round_trips() {
        assert_eq!(Open::parse("b_b"), Open::B);
        assert_eq!(Open::parse("new").as_str(), "new");
        assert_eq!(serde_json::to_value(Open::A).unwrap(), "a");
        assert_eq!(Closed::from_text("y"), Some(Closed::Y));
        assert_eq!(Closed::from_text("z"), None);
        assert_eq!(Closed::ALL.len(), 2);
        let c = rusqlite::Connection::open_in_memory().unwrap();
        let back: Closed = c.query_row("SELECT ?1", [Closed::X], |r| r.get(0)).unwrap();
        assert_eq!(back, Closed::X);
        let bad: rusqlite::Result<Closed> = c.query_row("SELECT 'z'", [], |r| r.get(0));
        assert!(bad.is_err());
        let open: Open = c.query_row("SELECT 'later'", [], |r| r.get(0)).unwrap();
        assert_eq!(open, Open::Other("later".into()));
    }
}
