// A Rust test binary (`rustc --test`): libtest runs its tests in threads
// of one process, several at once (test-suite mode splits them,
// tests/integration/test_suite_mode.c).  Correct: `locked` (threads add
// under a Mutex) and `channel` (mpsc); `slow` is #[ignore]d (not run,
// so not a test of its own to test-suite mode).  Racy: `bank::racy_withdraw`, a
// lost update across two threads (a load, then a store, of an atomic);
// natively it nearly always passes.
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;

#[test]
fn locked() {
    let n = Arc::new(Mutex::new(0));
    let hs: Vec<_> = (0..2)
        .map(|_| {
            let n = n.clone();
            thread::spawn(move || *n.lock().unwrap() += 1)
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    assert_eq!(*n.lock().unwrap(), 2);
}

#[test]
fn channel() {
    let (tx, rx) = mpsc::channel();
    for i in 0..2 {
        let tx = tx.clone();
        thread::spawn(move || tx.send(i).unwrap());
    }
    drop(tx);
    assert_eq!(rx.iter().sum::<i32>(), 1);
}

#[test]
#[ignore]
fn slow() {
    panic!("an ignored test runs only with --ignored");
}

mod bank {
    use super::*;

    static BALANCE: AtomicI32 = AtomicI32::new(0);

    #[test]
    fn racy_withdraw() {
        let hs: Vec<_> = (0..2)
            .map(|_| {
                thread::spawn(|| {
                    let v = BALANCE.load(Ordering::SeqCst);
                    BALANCE.store(v + 1, Ordering::SeqCst);
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(BALANCE.load(Ordering::SeqCst), 2, "lost update");
    }
}
