//! The Rust type of a run-time category (`type Category = dynamic` in Vox;
//! docs/runtime.md, "Categories at run time").

/// Declares the newtype vox-codegen generates for `type Name = dynamic`:
/// the text of the value the model chose among the call's categories,
/// serialized as that string, comparing equal to the caller's `&str` and
/// `String` values (both ways), and readable as a `&str`.
///
/// ```
/// vox_runtime::__private::run_time_category! {
///     /// A ticket's queue.
///     Queue
/// }
/// let q = Queue::new("billing");
/// assert!(q == "billing" && "billing" == q && q == String::from("billing"));
/// assert_eq!(q.as_str(), "billing");
/// assert_eq!(q.to_string(), "billing");
/// assert_eq!(vox_runtime::serde_json::to_string(&q).unwrap(), "\"billing\"");
/// ```
#[doc(hidden)]
#[macro_export]
macro_rules! run_time_category {
    ($(#[$attr:meta])* $name:ident) => {
        $(#[$attr])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(::std::string::String);

        impl $name {
            /// The value `text` (which the call's categories decide about:
            /// a value outside them is corrected when a model chose it).
            pub fn new(text: impl ::std::convert::Into<::std::string::String>) -> Self {
                $name(text.into())
            }

            /// The chosen value's text.
            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// The chosen value's text, owned.
            pub fn into_string(self) -> ::std::string::String {
                self.0
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl ::std::convert::AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl ::std::borrow::Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl ::std::convert::From<::std::string::String> for $name {
            fn from(text: ::std::string::String) -> Self {
                $name(text)
            }
        }

        impl ::std::convert::From<&str> for $name {
            fn from(text: &str) -> Self {
                $name(text.into())
            }
        }

        impl ::std::convert::From<$name> for ::std::string::String {
            fn from(value: $name) -> Self {
                value.0
            }
        }

        impl ::std::cmp::PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl ::std::cmp::PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }

        impl ::std::cmp::PartialEq<::std::string::String> for $name {
            fn eq(&self, other: &::std::string::String) -> bool {
                &self.0 == other
            }
        }

        impl ::std::cmp::PartialEq<$name> for str {
            fn eq(&self, other: &$name) -> bool {
                self == other.0
            }
        }

        impl ::std::cmp::PartialEq<$name> for &str {
            fn eq(&self, other: &$name) -> bool {
                *self == other.0
            }
        }

        impl ::std::cmp::PartialEq<$name> for ::std::string::String {
            fn eq(&self, other: &$name) -> bool {
                *self == other.0
            }
        }

        impl $crate::serde::Serialize for $name {
            fn serialize<S: $crate::serde::Serializer>(
                &self,
                serializer: S,
            ) -> ::std::result::Result<S::Ok, S::Error> {
                serializer.serialize_str(&self.0)
            }
        }

        impl<'de> $crate::serde::Deserialize<'de> for $name {
            fn deserialize<D: $crate::serde::Deserializer<'de>>(
                deserializer: D,
            ) -> ::std::result::Result<Self, D::Error> {
                <::std::string::String as $crate::serde::Deserialize<'de>>::deserialize(deserializer)
                    .map($name)
            }
        }
    };
}
