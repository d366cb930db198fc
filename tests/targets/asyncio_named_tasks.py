# asyncio_lost_update.py with its first client in a task the program names
# ("alice"; the second keeps asyncio's "Task-N"): a failing trace names
# both tasks, and the server's handler tasks, with their lines.  With
# "fixed" the server increments itself ("inc"): no update can be lost.
import asyncio
import sys

fixed = sys.argv[1:] == ["fixed"]
count = 0


async def handle(reader, writer):
    global count
    while True:
        line = await reader.readline()
        if not line:
            break
        if line == b"get\n":
            writer.write(b"%d\n" % count)
        elif line == b"inc\n":
            count += 1
            writer.write(b"ok\n")
        else:
            count = int(line[4:])
            writer.write(b"ok\n")
        await writer.drain()
    writer.close()


async def client(port, delay):
    await asyncio.sleep(delay)
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    if fixed:
        writer.write(b"inc\n")
    else:
        writer.write(b"get\n")
        await writer.drain()
        n = int(await reader.readline())
        writer.write(b"set %d\n" % (n + 1))
    await writer.drain()
    await reader.readline()
    writer.close()
    await writer.wait_closed()


async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    alice = asyncio.create_task(client(port, 0), name="alice")
    await asyncio.gather(alice, client(port, 0.002))
    server.close()
    await server.wait_closed()
    print("count", count)
    sys.exit(0 if count == 2 else 1)


asyncio.run(main())
