//! Wording every message shares, the pipeline's and the reports'.

/// `1 cluster`, `2 clusters`: a count and its noun (`one`), in the plural when it is not 1.
#[must_use]
pub fn plural(n: usize, one: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {one}s")
    }
}

/// An error type that carries its sentence: a failure of one kind, said in the words the
/// user reads (the words are part of fluxsim's output, so a type keeps them as they are).
/// It converts from the `String` or `&str` it is made of, shows as it, and derefs to it.
#[macro_export]
macro_rules! message_error {
    ($(#[$doc:meta])* $vis:vis struct $name:ident;) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
        #[error("{0}")]
        $vis struct $name(pub String);

        impl From<String> for $name {
            fn from(message: String) -> Self {
                $name(message)
            }
        }

        impl From<&str> for $name {
            fn from(message: &str) -> Self {
                $name(message.to_string())
            }
        }

        impl From<$name> for String {
            fn from(e: $name) -> Self {
                e.0
            }
        }

        impl std::ops::Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }
    };
}
