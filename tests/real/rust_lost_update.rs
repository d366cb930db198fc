// A lost update in Rust: two threads each add 1 to a shared counter with a
// relaxed load and a separate store, so a thread preempted between the two
// overwrites the other's update and the program exits 1.  Natively it
// almost never fails; built by tests/real/test_real.c with rustc.
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;

fn main() {
    let n = Arc::new(AtomicU64::new(0));
    let hs: Vec<_> = (0..2)
        .map(|_| {
            let n = Arc::clone(&n);
            thread::spawn(move || {
                let v = n.load(Ordering::Relaxed);
                n.store(v + 1, Ordering::Relaxed);
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    let got = n.load(Ordering::SeqCst);
    println!("count {}", got);
    std::process::exit(if got == 2 { 0 } else { 1 });
}
