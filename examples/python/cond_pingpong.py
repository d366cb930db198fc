# Two threads take turns through a threading.Condition: ping, pong, ping...
# Correct: the turn is checked in a loop under the condition's lock.
import threading

ROUNDS = 2
cond = threading.Condition()
turn = "ping"
log = []


def player(me, other):
    global turn
    for _ in range(ROUNDS):
        with cond:
            while turn != me:
                cond.wait()
            log.append(me)
            turn = other
            cond.notify()


def main():
    ts = [threading.Thread(target=player, args=("ping", "pong"), name="ping"),
          threading.Thread(target=player, args=("pong", "ping"), name="pong")]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert log == ["ping", "pong"] * ROUNDS, log


if __name__ == "__main__":
    main()
