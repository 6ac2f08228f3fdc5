//! The environment a command the analysis judged must run in, so that the shell reads the text
//! as it was analysed.
//!
//! The analysis reads command text as UTF-8 (or a single-byte character set: every byte below
//! 0x80 is then the ASCII character it looks like). In a locale whose character set is neither
//! (Big5, GBK, GB18030, Shift_JIS, …) bash reads some multibyte characters as swallowing the next
//! byte: in `echo 中\; id` under `zh_TW.BIG5` the last byte of `中` and the backslash form one
//! character, so the `;` separates a second command, `id`, which the analysis never saw. The
//! policy therefore refuses a request that sets such a locale
//! (`environment::refusal`), and a runner starts every child through [`child_environment`],
//! which also forces a UTF-8 locale when the one the child would inherit is not analysable.

use std::collections::BTreeMap;

/// The locale forced on a child whose inherited character set the analysis cannot read. If the
/// host lacks it, the C library falls back to `C` (ASCII), which is as good.
pub const FORCED_LOCALE: (&str, &str) = ("LC_ALL", "C.UTF-8");

/// Variables of the gateway's own environment that change what a shell runs or how it reads
/// its input: a runner never passes them on from the host (the request's own are judged by the
/// policy and shown to the person who approves them).
/// - `PS4` is expanded, command substitutions included, before every traced command, and
///   `SHELLOPTS`/`BASHOPTS` can turn tracing on;
/// - `BASH_ENV` (bash) and `ENV` (an interactive `sh`) name a file of code run first;
/// - `IFS` splits unquoted expansions, `CDPATH` moves `cd`, `GLOBIGNORE` changes globbing;
/// - `BASH_FUNC_name%%` defines a function that shadows the program `name`;
/// - `PROMPT_COMMAND` runs before a prompt;
/// - `LOCPATH` moves the locale files, so a locale name would no longer say which character set
///   is used.
pub const SHELL_STATE_VARIABLES: &[&str] = &[
    "PS4",
    "SHELLOPTS",
    "BASHOPTS",
    "BASH_ENV",
    "ENV",
    "IFS",
    "CDPATH",
    "GLOBIGNORE",
    "PROMPT_COMMAND",
    "LOCPATH",
];

/// Whether a variable of the host's environment must not reach a child (see
/// [`SHELL_STATE_VARIABLES`]).
pub fn is_shell_state_variable(name: &str) -> bool {
    SHELL_STATE_VARIABLES.contains(&name) || name.starts_with("BASH_FUNC_")
}

/// The environment to start a child with: the host variables the runner chose to pass
/// (`inherited`) without any shell-state variable, then the request's own variables, then
/// [`FORCED_LOCALE`] when the character set the child would use is not one the analysis reads
/// as it does (see [`is_analysable_locale`]). An approved request's own locale is forced too:
/// the person approved the text as shown, in UTF-8.
pub fn child_environment<I>(
    inherited: I,
    request: &BTreeMap<String, String>,
) -> BTreeMap<String, String>
where
    I: IntoIterator<Item = (String, String)>,
{
    let mut env: BTreeMap<String, String> = inherited
        .into_iter()
        .filter(|(name, _)| !is_shell_state_variable(name))
        .collect();
    env.extend(request.iter().map(|(k, v)| (k.clone(), v.clone())));
    if !is_analysable_locale(effective_ctype(&env)) {
        env.insert(FORCED_LOCALE.0.to_owned(), FORCED_LOCALE.1.to_owned());
    }
    env
}

/// The locale that decides the character set: the first non-empty of `LC_ALL`, `LC_CTYPE` and
/// `LANG`, as the C library picks it; empty when none is set (the `C` locale).
pub fn effective_ctype(env: &BTreeMap<String, String>) -> &str {
    ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .filter_map(|name| env.get(*name))
        .find(|value| !value.is_empty())
        .map_or("", String::as_str)
}

/// Single-byte character sets glibc ships locales for, normalized as glibc normalizes a codeset
/// (lower case, only letters and digits). In each, a byte below 0x80 is always its ASCII
/// character, so the shell splits words where the analysis does.
const SINGLE_BYTE_CODESETS: &[&str] = &[
    "ansix341968",
    "ascii",
    "usascii",
    "iso88591",
    "iso88592",
    "iso88593",
    "iso88594",
    "iso88595",
    "iso88596",
    "iso88597",
    "iso88598",
    "iso88599",
    "iso885910",
    "iso885911",
    "iso885913",
    "iso885914",
    "iso885915",
    "iso885916",
    "koi8r",
    "koi8u",
    "koi8t",
    "cp1250",
    "cp1251",
    "cp1252",
    "cp1255",
    "tis620",
    "georgianps",
    "pt154",
    "rk1048",
    "armscii8",
];

/// Whether a locale name (`LC_ALL`, `LC_CTYPE` or `LANG` value) selects a character set the
/// analysis reads as the shell does: empty (unset), `C`, `POSIX`, or a name whose codeset
/// (`language_TERRITORY.codeset@modifier`) is UTF-8 or a single-byte set. A name without a
/// codeset (`zh_TW`, `en_US`) gets the locale's default one, which may be Big5 (`zh_TW`), so it
/// is not analysable either.
pub fn is_analysable_locale(name: &str) -> bool {
    if matches!(name, "" | "C" | "POSIX") {
        return true;
    }
    let without_modifier = name.split('@').next().unwrap_or(name);
    let Some((_, codeset)) = without_modifier.split_once('.') else {
        return false;
    };
    let normalized: String = codeset
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    normalized == "utf8" || SINGLE_BYTE_CODESETS.contains(&normalized.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_utf8_and_single_byte_locales_as_analysable() {
        for name in [
            "",
            "C",
            "POSIX",
            "C.UTF-8",
            "C.utf8",
            "en_US.UTF-8",
            "de_DE.utf8@euro",
            "sr_RS.UTF-8@latin",
            "en_US.ISO-8859-1",
            "ru_RU.KOI8-R",
            "th_TH.TIS-620",
        ] {
            assert!(is_analysable_locale(name), "{name:?}");
        }
    }

    #[test]
    fn denies_multibyte_sets_and_names_without_a_codeset() {
        for name in [
            "zh_TW.BIG5",
            "zh_TW.Big5-HKSCS",
            "zh_CN.GBK",
            "zh_CN.GB18030",
            "ja_JP.SJIS",
            "ja_JP.Shift_JIS",
            "ja_JP.EUC-JP",
            "ko_KR.EUC-KR",
            "zh_TW",
            "en_US",
            "C.BIG5",
        ] {
            assert!(!is_analysable_locale(name), "{name:?}");
        }
    }

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn forces_a_utf8_locale_only_when_the_childs_is_not_analysable() {
        let host =
            |pairs: &[(&str, &str)]| -> Vec<(String, String)> { env(pairs).into_iter().collect() };
        let kept = child_environment(host(&[("LANG", "en_US.UTF-8")]), &BTreeMap::new());
        assert_eq!(kept.get("LC_ALL"), None);
        let forced = child_environment(host(&[("LANG", "zh_TW.BIG5")]), &BTreeMap::new());
        assert_eq!(forced.get("LC_ALL").map(String::as_str), Some("C.UTF-8"));
        // The request's own variable counts too; LC_ALL wins over LANG.
        let request = env(&[("LC_ALL", "zh_CN.GBK"), ("LANG", "C.UTF-8")]);
        let forced = child_environment(Vec::new(), &request);
        assert_eq!(forced.get("LC_ALL").map(String::as_str), Some("C.UTF-8"));
        assert_eq!(forced.get("LANG").map(String::as_str), Some("C.UTF-8"));
    }

    #[test]
    fn drops_the_hosts_shell_state_variables_but_keeps_the_requests() {
        let host = env(&[
            ("PS4", "$(id)"),
            ("BASH_ENV", "/tmp/x"),
            ("BASH_FUNC_ls%%", "() { id; }"),
            ("PATH", "/usr/bin"),
        ]);
        let request = env(&[("IFS", "x")]);
        let child = child_environment(host, &request);
        let names: Vec<&str> = child.keys().map(String::as_str).collect();
        assert_eq!(names, ["IFS", "PATH"]);
    }
}
