//! The small part of CBOR (RFC 8949) that WebAuthn sends: an attestation object and a
//! COSE public key. Definite lengths only (CTAP2's canonical encoding), at most
//! [`MAX_DEPTH`] levels, every length checked against the bytes left; anything else is an
//! error, never a panic. Floats and tags are read and kept opaque.

/// One decoded item.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Int(i128),
    Bytes(Vec<u8>),
    Text(String),
    Array(Vec<Value>),
    Map(Vec<(Value, Value)>),
    Bool(bool),
    Null,
    /// A float or another simple value (not used by WebAuthn; kept so a map holding one
    /// still decodes).
    Other,
}

/// The deepest nesting accepted.
pub const MAX_DEPTH: usize = 16;

impl Value {
    /// The value under integer key `k` of a map.
    pub fn int_key(&self, k: i128) -> Option<&Value> {
        self.entries().find(|(key, _)| **key == Value::Int(k)).map(|(_, v)| v)
    }
    /// The value under text key `k` of a map.
    pub fn text_key(&self, k: &str) -> Option<&Value> {
        self.entries().find(|(key, _)| matches!(key, Value::Text(t) if t == k)).map(|(_, v)| v)
    }
    fn entries(&self) -> impl Iterator<Item = (&Value, &Value)> {
        let pairs: &[(Value, Value)] = match self {
            Value::Map(m) => m,
            _ => &[],
        };
        pairs.iter().map(|(k, v)| (k, v))
    }
    pub fn as_int(&self) -> Option<i128> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }
    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Value::Bytes(b) => Some(b),
            _ => None,
        }
    }
}

/// Decode the first item of `bytes`: the item and how many bytes it took.
pub fn decode(bytes: &[u8]) -> Result<(Value, usize), String> {
    let mut r = Reader { bytes, at: 0 };
    let v = r.item(0)?;
    Ok((v, r.at))
}

/// Decode `bytes`, which must hold exactly one item.
pub fn decode_all(bytes: &[u8]) -> Result<Value, String> {
    let (v, used) = decode(bytes)?;
    if used != bytes.len() {
        return Err(format!("{} bytes follow the CBOR item", bytes.len() - used));
    }
    Ok(v)
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], String> {
        let end = self.at.checked_add(n).filter(|e| *e <= self.bytes.len()).ok_or("the CBOR item is cut short")?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }

    /// The argument of an item whose initial byte had `info` as its low five bits.
    fn argument(&mut self, info: u8) -> Result<u64, String> {
        Ok(match info {
            0..=23 => u64::from(info),
            24 => u64::from(self.take(1)?[0]),
            25 => u64::from(u16::from_be_bytes(self.take(2)?.try_into().map_err(|_| "short")?)),
            26 => u64::from(u32::from_be_bytes(self.take(4)?.try_into().map_err(|_| "short")?)),
            27 => u64::from_be_bytes(self.take(8)?.try_into().map_err(|_| "short")?),
            31 => return Err("indefinite-length CBOR is not accepted".into()),
            _ => return Err(format!("reserved CBOR additional information {info}")),
        })
    }

    /// A length: at most the bytes left (each element takes at least one byte).
    fn length(&mut self, info: u8) -> Result<usize, String> {
        let n = self.argument(info)?;
        let left = (self.bytes.len() - self.at) as u64;
        if n > left {
            return Err(format!("a CBOR length of {n} exceeds the {left} bytes left"));
        }
        Ok(n as usize)
    }

    fn item(&mut self, depth: usize) -> Result<Value, String> {
        if depth > MAX_DEPTH {
            return Err(format!("CBOR nested deeper than {MAX_DEPTH}"));
        }
        let first = self.take(1)?[0];
        let (major, info) = (first >> 5, first & 0x1f);
        Ok(match major {
            0 => Value::Int(i128::from(self.argument(info)?)),
            1 => Value::Int(-1 - i128::from(self.argument(info)?)),
            2 => {
                let n = self.length(info)?;
                Value::Bytes(self.take(n)?.to_vec())
            }
            3 => {
                let n = self.length(info)?;
                let raw = self.take(n)?.to_vec();
                Value::Text(String::from_utf8(raw).map_err(|_| "a CBOR text string is not UTF-8")?)
            }
            4 => {
                let n = self.length(info)?;
                let mut items = Vec::with_capacity(n);
                for _ in 0..n {
                    items.push(self.item(depth + 1)?);
                }
                Value::Array(items)
            }
            5 => {
                let n = self.length(info)?;
                let mut pairs = Vec::with_capacity(n);
                for _ in 0..n {
                    let k = self.item(depth + 1)?;
                    let v = self.item(depth + 1)?;
                    pairs.push((k, v));
                }
                Value::Map(pairs)
            }
            6 => {
                self.argument(info)?;
                self.item(depth + 1)?
            }
            _ => match info {
                20 => Value::Bool(false),
                21 => Value::Bool(true),
                22 | 23 => Value::Null,
                24 => {
                    self.take(1)?;
                    Value::Other
                }
                25..=27 => {
                    self.take(1 << (info - 24))?;
                    Value::Other
                }
                0..=19 => Value::Other,
                _ => return Err(format!("CBOR simple value with additional information {info}")),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_what_webauthn_sends() {
        // {"fmt": "none", "attStmt": {}, "authData": h'0102'}
        let bytes = [
            0xa3, 0x63, b'f', b'm', b't', 0x64, b'n', b'o', b'n', b'e', 0x67, b'a', b't', b't', b'S', b't', b'm', b't',
            0xa0, 0x68, b'a', b'u', b't', b'h', b'D', b'a', b't', b'a', 0x42, 1, 2,
        ];
        let v = decode_all(&bytes).unwrap();
        assert_eq!(v.text_key("fmt"), Some(&Value::Text("none".into())));
        assert_eq!(v.text_key("authData").and_then(Value::as_bytes), Some(&[1u8, 2][..]));
        // A COSE key's negative keys: {1: 2, -1: 1, -2: h'00'}
        let v = decode_all(&[0xa3, 0x01, 0x02, 0x20, 0x01, 0x21, 0x41, 0x00]).unwrap();
        assert_eq!(v.int_key(1).and_then(Value::as_int), Some(2));
        assert_eq!(v.int_key(-1).and_then(Value::as_int), Some(1));
        assert_eq!(v.int_key(-2).and_then(Value::as_bytes), Some(&[0u8][..]));
        // The item's own length is reported, so what follows it can be read.
        assert_eq!(decode(&[0x01, 0xff]).unwrap(), (Value::Int(1), 1));
        assert_eq!(decode_all(&[0x01, 0x02]).unwrap_err(), "1 bytes follow the CBOR item");
        assert_eq!(
            decode_all(&[0x3b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]).unwrap(),
            Value::Int(-1 - u64::MAX as i128)
        );
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        let cases: &[&[u8]] = &[
            &[],
            &[0x5a, 0xff, 0xff, 0xff, 0xff], // bytes longer than the input
            &[0x9b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff], // a huge array
            &[0x5f],                         // indefinite bytes
            &[0x62, 0xff, 0xfe],             // text that is not UTF-8
            &[0x1c],                         // reserved
            &[0xa1, 0x01],                   // a map missing its value
            &[0xf8],                         // a simple value cut short
        ];
        for c in cases {
            assert!(decode(c).is_err(), "{c:02x?}");
        }
        // Nesting past the limit.
        let deep = vec![0x81u8; MAX_DEPTH + 2];
        assert!(decode(&deep).unwrap_err().contains("deeper"));
    }
}
