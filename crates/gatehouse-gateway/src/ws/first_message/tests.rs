//! The header walk, fed whole or a byte at a time, and the refusal as a read error.

use tokio::io::AsyncReadExt as _;

use super::*;

const TEXT: u8 = 0x1;
const CONTINUATION: u8 = 0x0;
const PING: u8 = 0x9;
const FINAL: bool = true;
const MORE: bool = false;

/// A client frame (masked, as RFC 6455 requires of clients) with `len` zero bytes of payload.
fn frame(fin: bool, opcode: u8, len: usize) -> Vec<u8> {
    let mut bytes = vec![if fin { 0x80 | opcode } else { opcode }];
    match len {
        0..=125 => bytes.push(0x80 | len as u8),
        126..=0xffff => {
            bytes.push(0x80 | 126);
            bytes.extend_from_slice(&(len as u16).to_be_bytes());
        }
        _ => {
            bytes.push(0x80 | 127);
            bytes.extend_from_slice(&(len as u64).to_be_bytes());
        }
    }
    bytes.extend_from_slice(&[1, 2, 3, 4]);
    bytes.resize(bytes.len() + len, 0);
    bytes
}

/// What the watch says of `frames` with `limit`, fed in one read and a byte at a time (both
/// must agree), and whether it stopped watching.
fn check(frames: &[Vec<u8>], limit: usize, expect: Result<bool, usize>) {
    let bytes = frames.concat();
    let outcome = |watch: &Watch, result: Result<(), FirstMessageTooLarge>| {
        result
            .map(|()| matches!(watch.at, At::Passed))
            .map_err(|refused| refused.size)
    };
    let mut whole = Watch::new(limit);
    let result = whole.follow(&bytes);
    assert_eq!(outcome(&whole, result), expect, "whole");
    let mut bytewise = Watch::new(limit);
    let result = bytes.chunks(1).try_for_each(|byte| bytewise.follow(byte));
    assert_eq!(outcome(&bytewise, result), expect, "a byte at a time");
}

#[test]
fn allows_a_first_message_within_the_bound_then_stops_watching() {
    check(&[frame(FINAL, TEXT, 16)], 16, Ok(true));
    check(&[frame(FINAL, TEXT, 0)], 16, Ok(true));
    check(&[frame(FINAL, TEXT, 300)], 300, Ok(true));
    // Past the first message nothing is counted, however large.
    check(
        &[frame(FINAL, TEXT, 10), frame(FINAL, TEXT, 70_000)],
        16,
        Ok(true),
    );
    // A partial first message is still watched.
    check(&[frame(MORE, TEXT, 8)], 16, Ok(false));
    check(&[frame(FINAL, TEXT, 8)[..3].to_vec()], 16, Ok(false));
}

#[test]
fn refuses_a_first_frame_over_the_bound_at_its_header() {
    check(&[frame(FINAL, TEXT, 17)], 16, Err(17));
    check(&[frame(FINAL, TEXT, 300)], 299, Err(300));
    check(&[frame(FINAL, TEXT, 70_000)], 16 * 1024, Err(70_000));
    // The header alone is enough: the payload need not have arrived.
    check(
        &[frame(FINAL, TEXT, 70_000)[..14].to_vec()],
        16 * 1024,
        Err(70_000),
    );
}

#[test]
fn refuses_fragments_and_control_frames_that_add_up_over_the_bound() {
    check(
        &[frame(MORE, TEXT, 10), frame(FINAL, CONTINUATION, 10)],
        16,
        Err(20),
    );
    check(
        &[frame(FINAL, PING, 10), frame(FINAL, TEXT, 10)],
        16,
        Err(20),
    );
    // A control frame between fragments does not end the message.
    check(
        &[
            frame(MORE, TEXT, 4),
            frame(FINAL, PING, 4),
            frame(FINAL, CONTINUATION, 4),
        ],
        16,
        Ok(true),
    );
}

#[tokio::test]
async fn fails_the_read_with_the_refusal_and_keeps_failing() {
    let bytes = frame(FINAL, TEXT, 100);
    let mut limited = FirstMessageLimit::new(bytes.as_slice(), 16);
    let mut buf = [0; 256];
    for _ in 0..2 {
        let error = limited.read(&mut buf).await.unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidData);
        let refused = error
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<FirstMessageTooLarge>());
        assert_eq!(
            refused,
            Some(&FirstMessageTooLarge {
                size: 100,
                limit: 16
            })
        );
    }
}
