//! Typed reads of a tool's `tool_input`, with errors naming the tool and the parameter.

use serde_json::{Map, Value};

use crate::error::HookError;

/// The arguments of one call of the host tool `tool`.
pub(crate) struct Args<'a> {
    tool: &'a str,
    input: &'a Map<String, Value>,
}

impl<'a> Args<'a> {
    pub(crate) fn new(tool: &'a str, input: &'a Map<String, Value>) -> Self {
        Args { tool, input }
    }

    /// A required string.
    pub(crate) fn string(&self, param: &'static str) -> Result<&'a str, HookError> {
        self.optional_string(param)?
            .ok_or_else(|| HookError::MissingParam {
                tool: self.tool.to_owned(),
                param,
            })
    }

    /// An optional string; `null` is absent.
    pub(crate) fn optional_string(
        &self,
        param: &'static str,
    ) -> Result<Option<&'a str>, HookError> {
        match self.input.get(param) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(_) => Err(self.wrong(param, "a string")),
        }
    }

    /// An optional non-negative integer; `null` is absent.
    pub(crate) fn optional_count(&self, param: &'static str) -> Result<Option<u64>, HookError> {
        match self.input.get(param) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => value
                .as_u64()
                .map(Some)
                .ok_or_else(|| self.wrong(param, "a non-negative integer")),
        }
    }

    /// An optional boolean; `null` is absent.
    pub(crate) fn optional_bool(&self, param: &'static str) -> Result<Option<bool>, HookError> {
        match self.input.get(param) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(flag)) => Ok(Some(*flag)),
            Some(_) => Err(self.wrong(param, "true or false")),
        }
    }

    /// A required array of objects.
    pub(crate) fn objects(&self, param: &'static str) -> Result<Vec<Args<'a>>, HookError> {
        let Some(value) = self.input.get(param) else {
            return Err(HookError::MissingParam {
                tool: self.tool.to_owned(),
                param,
            });
        };
        let Some(items) = value.as_array() else {
            return Err(self.wrong(param, "an array of objects"));
        };
        items
            .iter()
            .map(|item| {
                item.as_object()
                    .map(|input| Args::new(self.tool, input))
                    .ok_or_else(|| self.wrong(param, "an array of objects"))
            })
            .collect()
    }

    /// A refusal of `param`'s value.
    pub(crate) fn invalid(&self, param: &'static str, why: String) -> HookError {
        HookError::InvalidParam {
            tool: self.tool.to_owned(),
            param,
            why,
        }
    }

    fn wrong(&self, param: &'static str, expected: &'static str) -> HookError {
        HookError::WrongParam {
            tool: self.tool.to_owned(),
            param,
            expected,
        }
    }
}
