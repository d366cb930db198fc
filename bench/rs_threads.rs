// A small std::thread program for bench/speed.sh: three threads update a
// Mutex counter and report over an mpsc channel.  Correct; every schedule
// passes.
use std::sync::{Arc, Mutex, mpsc};
use std::thread;
fn main() {
    let counter = Arc::new(Mutex::new(0u64));
    let (tx, rx) = mpsc::channel();
    let mut hs = vec![];
    for i in 0..3 {
        let c = Arc::clone(&counter);
        let tx = tx.clone();
        hs.push(thread::spawn(move || {
            for _ in 0..5 { *c.lock().unwrap() += 1; }
            tx.send(i).unwrap();
        }));
    }
    drop(tx);
    let got: Vec<i32> = rx.iter().collect();
    for h in hs { h.join().unwrap(); }
    assert_eq!(got.len(), 3);
    println!("{}", *counter.lock().unwrap());
}
