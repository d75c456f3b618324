//! Structs are read from JSON objects only.
//!
//! Serde also reads a struct from an array of its fields in order (`[1, "x"]` for
//! `{"a": 1, "b": "x"}`, `[]` for a struct whose fields all have defaults). No schema of the
//! API admits that, and it would let a client's mistake pass unnoticed (`"guardrails": []`
//! changing nothing instead of being refused). [`Objects`] wraps a deserializer so that every
//! struct and every struct variant, at any depth, refuses an array; everything else is read
//! exactly as the wrapped deserializer reads it.

use serde::de::{self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, Visitor};

/// A deserializer whose structs, at every depth, are read from objects only.
pub struct Objects<D>(pub D);

/// Forwards `deserialize_*` methods, wrapping the visitor so that what it reads nested is
/// wrapped too.
macro_rules! forward {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {
        $(
            fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, D::Error> {
                self.0.$method($($arg,)* Wrap { inner: visitor, object_only: false })
            }
        )*
    };
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Objects<D> {
    type Error = D::Error;

    forward! {
        deserialize_any();
        deserialize_bool();
        deserialize_i8();
        deserialize_i16();
        deserialize_i32();
        deserialize_i64();
        deserialize_i128();
        deserialize_u8();
        deserialize_u16();
        deserialize_u32();
        deserialize_u64();
        deserialize_u128();
        deserialize_f32();
        deserialize_f64();
        deserialize_char();
        deserialize_str();
        deserialize_string();
        deserialize_bytes();
        deserialize_byte_buf();
        deserialize_option();
        deserialize_unit();
        deserialize_unit_struct(name: &'static str);
        deserialize_newtype_struct(name: &'static str);
        deserialize_seq();
        deserialize_tuple(len: usize);
        deserialize_tuple_struct(name: &'static str, len: usize);
        deserialize_map();
        deserialize_enum(name: &'static str, variants: &'static [&'static str]);
        deserialize_identifier();
        deserialize_ignored_any();
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_struct(
            name,
            fields,
            Wrap {
                inner: visitor,
                object_only: true,
            },
        )
    }

    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}

/// A visitor whose nested reads go through [`Objects`]; `object_only` refuses an array.
struct Wrap<V> {
    inner: V,
    object_only: bool,
}

/// Forwards `visit_*` methods of plain values.
macro_rules! visit {
    ($($method:ident($ty:ty);)*) => {
        $(
            fn $method<E: de::Error>(self, v: $ty) -> Result<Self::Value, E> {
                self.inner.$method(v)
            }
        )*
    };
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Wrap<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.inner.expecting(f)
    }

    visit! {
        visit_bool(bool);
        visit_i8(i8);
        visit_i16(i16);
        visit_i32(i32);
        visit_i64(i64);
        visit_i128(i128);
        visit_u8(u8);
        visit_u16(u16);
        visit_u32(u32);
        visit_u64(u64);
        visit_u128(u128);
        visit_f32(f32);
        visit_f64(f64);
        visit_char(char);
        visit_str(&str);
        visit_borrowed_str(&'de str);
        visit_string(String);
        visit_bytes(&[u8]);
        visit_borrowed_bytes(&'de [u8]);
        visit_byte_buf(Vec<u8>);
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        self.inner.visit_none()
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        self.inner.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        self.inner.visit_some(Objects(d))
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        self.inner.visit_newtype_struct(Objects(d))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        if self.object_only {
            return Err(de::Error::invalid_type(de::Unexpected::Seq, &self));
        }
        self.inner.visit_seq(Seq(seq))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        self.inner.visit_map(Map(map))
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Self::Value, A::Error> {
        self.inner.visit_enum(Enum(data))
    }
}

/// A seed whose value is read through [`Objects`].
struct Seed<S>(S);

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Seed<S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        self.0.deserialize(Objects(d))
    }
}

/// The elements of an array, each read through [`Objects`].
struct Seq<A>(A);

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Seq<A> {
    type Error = A::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, A::Error> {
        self.0.next_element_seed(Seed(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

/// The entries of an object, each value read through [`Objects`].
struct Map<A>(A);

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Map<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        self.0.next_key_seed(seed)
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        self.0.next_value_seed(Seed(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

/// An externally tagged enum value, its content read through [`Objects`].
struct Enum<A>(A);

impl<'de, A: EnumAccess<'de>> EnumAccess<'de> for Enum<A> {
    type Error = A::Error;
    type Variant = Variant<A::Variant>;

    fn variant_seed<T: DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<(T::Value, Self::Variant), A::Error> {
        self.0
            .variant_seed(seed)
            .map(|(value, variant)| (value, Variant(variant)))
    }
}

/// The content of an enum variant; a struct variant is read from an object only.
struct Variant<A>(A);

impl<'de, A: de::VariantAccess<'de>> de::VariantAccess<'de> for Variant<A> {
    type Error = A::Error;

    fn unit_variant(self) -> Result<(), A::Error> {
        self.0.unit_variant()
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, A::Error> {
        self.0.newtype_variant_seed(Seed(seed))
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, A::Error> {
        self.0.tuple_variant(
            len,
            Wrap {
                inner: visitor,
                object_only: false,
            },
        )
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        self.0.struct_variant(
            fields,
            Wrap {
                inner: visitor,
                object_only: true,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Inner {
        #[serde(default)]
        a: u8,
        #[serde(default)]
        b: String,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Outer {
        inner: Option<Inner>,
        #[serde(default)]
        list: Vec<Inner>,
        #[serde(default)]
        tags: Vec<String>,
        #[serde(default)]
        free: serde_json::Value,
    }

    fn read(json: &str) -> Result<Outer, serde_json::Error> {
        Outer::deserialize(Objects(&mut serde_json::Deserializer::from_str(json)))
    }

    #[test]
    fn a_struct_at_any_depth_refuses_an_array() {
        for refused in [
            r#"[{"a": 1}]"#,
            r#"{"inner": []}"#,
            r#"{"inner": [1, "x"]}"#,
            r#"{"inner": null, "list": [[1, "x"]]}"#,
        ] {
            assert!(read(refused).is_err(), "{refused} was read");
        }
        // The plain reading of the same type takes them: the wrapper is what refuses.
        assert!(serde_json::from_str::<Outer>(r#"{"inner": [1, "x"]}"#).is_ok());
    }

    #[test]
    fn everything_else_reads_as_before() {
        let read = read(
            r#"{"inner": {"a": 1}, "list": [{"b": "x"}], "tags": ["t"], "free": [[1], {"k": []}]}"#,
        )
        .expect("read");
        assert_eq!(
            read,
            Outer {
                inner: Some(Inner {
                    a: 1,
                    b: String::new()
                }),
                list: vec![Inner {
                    a: 0,
                    b: "x".into()
                }],
                tags: vec!["t".into()],
                free: serde_json::json!([[1], {"k": []}]),
            }
        );
    }
}
