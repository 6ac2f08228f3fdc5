use gatehouse_chat::grammar::elevated::{ElevatedParse, ElevatedRefusal, parse_elevated};
use gatehouse_policy::elevated::ElevatedLevel::{self, Ask, Full, Off, On};
use pretty_assertions::assert_eq;

fn check(text: &str, expect: ElevatedParse) {
    assert_eq!(
        parse_elevated(text, Some("gatebot")),
        expect,
        "input: {text:?}"
    );
}

fn set(level: ElevatedLevel) -> ElevatedParse {
    ElevatedParse::Set(level)
}

#[test]
fn accepts_every_level_and_alias_under_both_names() {
    for (word, level) in [
        ("off", Off),
        ("false", Off),
        ("no", Off),
        ("0", Off),
        ("on", On),
        ("true", On),
        ("yes", On),
        ("1", On),
        ("ask", Ask),
        ("prompt", Ask),
        ("approval", Ask),
        ("approve", Ask),
        ("full", Full),
        ("auto", Full),
        ("auto-approve", Full),
        ("autoapprove", Full),
        ("FULL", Full),
        ("Yes", On),
    ] {
        check(&format!("/elevated {word}"), set(level));
        check(&format!("/elev {word}"), set(level));
    }
}

#[test]
fn accepts_colon_mention_and_case() {
    check("/elevated: on", set(On));
    check("/elev@gatebot off", set(Off));
    check("/Elevated@GATEBOT: full", set(Full));
}

#[test]
fn queries_without_a_level() {
    check("/elevated", ElevatedParse::Query);
    check("/elev", ElevatedParse::Query);
    check("/elevated@gatebot", ElevatedParse::Query);
    check("/elevated:   ", ElevatedParse::Query);
}

#[test]
fn refuses_unknown_levels_extra_words_and_other_bots() {
    check(
        "/elevated max",
        ElevatedParse::Refused(ElevatedRefusal::UnknownLevel { word: "max".into() }),
    );
    check(
        "/elevated 2",
        ElevatedParse::Refused(ElevatedRefusal::UnknownLevel { word: "2".into() }),
    );
    check(
        "/elevated on please",
        ElevatedParse::Refused(ElevatedRefusal::ExtraTokens {
            extra: vec!["please".into()],
        }),
    );
    check(
        "/elev@otherbot on",
        ElevatedParse::Refused(ElevatedRefusal::OtherBot {
            mention: "otherbot".into(),
        }),
    );
}

#[test]
fn ignores_text_that_is_not_the_command() {
    check("elevated on", ElevatedParse::NotCommand);
    check("/elevate on", ElevatedParse::NotCommand);
    check("/elevator on", ElevatedParse::NotCommand);
    check("/approve abc deny", ElevatedParse::NotCommand);
}
