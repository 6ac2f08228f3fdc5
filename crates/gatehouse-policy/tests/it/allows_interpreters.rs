//! Allows next to `refusals_interpreters`: everyday interpreter, sed, awk, make and shell-flag
//! commands that the stricter option grammars must keep running without a person.

use crate::support::Expect::Allow;
use crate::support::check;

/// `-x` is no longer among them: it expands `PS4` (see `refusals_shell_state`).
#[test]
fn allows_harmless_shell_flags_beside_c() {
    check(&[
        ("bash -ec 'ls && git status'", Allow),
        ("sh -euc 'git status'", Allow),
        ("sh -vfc ls", Allow),
        ("bash -ce 'ls'", Allow),
    ]);
}

#[test]
fn allows_interpreters_running_files() {
    check(&[
        ("python3 -W ignore script.py", Allow),
        ("python3 -X dev -u script.py --flag", Allow),
        ("python3 -m ruff check .", Allow),
        ("python3 -m black --check src", Allow),
        ("python3 -Wc script.py", Allow),
        ("python3 --version", Allow),
        ("perl -I lib -w script.pl", Allow),
        ("perl -MPOSIX -MO=Deparse,-p script.pl", Allow),
        ("perl -pi.bak script.pl", Allow),
        ("perl -v", Allow),
        ("node -r ts-node/register app.js", Allow),
        ("node --max-old-space-size=4096 build.js", Allow),
        ("node --enable-source-maps app.js", Allow),
        ("node --test --test-reporter=spec", Allow),
        ("node --test --test-reporter ./reporter.mjs", Allow),
        ("node --test", Allow),
        ("node --version", Allow),
        ("ruby -Ilib -rjson script.rb", Allow),
        ("php -d memory_limit=1G script.php", Allow),
        ("php -f script.php", Allow),
    ]);
}

#[test]
fn allows_sed_awk_and_make_without_inline_code() {
    check(&[
        ("sed -i 's/a/b/' file.txt", Allow),
        ("sed -i.bak -e 's/a/b/' file.txt", Allow),
        ("sed -n -e 's/a/b/p' file.txt", Allow),
        ("sed -E --expression='s/(a)/\\1/' file.txt", Allow),
        ("sed -l 80 -n l file.txt", Allow),
        ("sed --quiet 5p file.txt", Allow),
        ("sed -f script.sed file.txt", Allow),
        ("awk -F, -f prog.awk data.csv", Allow),
        ("awk -v n=1 -f prog.awk data.csv", Allow),
        ("awk --version", Allow),
        ("sed -f scripts/x.sed file.txt", Allow),
        ("make", Allow),
        ("make -j8 -k test", Allow),
        ("make -C sub test", Allow),
        ("make -f build.mk all", Allow),
        ("make --file=build.mk -n", Allow),
    ]);
}

#[test]
fn allows_safe_bin_abbreviations_the_real_tool_reads_the_same() {
    check(&[
        ("cat x | sort --ke=1,1", Allow),
        ("cat x | head --li 5", Allow),
        ("cat x | grep --ignore-c -e needle", Allow),
        ("cat x | grep --binary-files=text -e needle", Allow),
    ]);
}

#[test]
fn allows_a_bare_interpreter_nothing_is_piped_into() {
    check(&[
        ("python3", Allow),
        ("python3 | cat", Allow),
        ("ls | sort", Allow),
    ]);
}
