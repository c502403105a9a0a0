import threading, time

def crunch(n):
    s = 0
    for i in range(n):
        s += i * i
    return s

def worker(stop):
    while time.process_time() < stop:
        crunch(5000)

def main():
    stop = time.process_time() + 0.4
    t = threading.Thread(target=worker, args=(stop,))
    t.start()
    while time.process_time() < stop:
        crunch(20000)
    t.join()

main()
