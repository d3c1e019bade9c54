#!/usr/bin/env python3
"""The Neovim plugin (Editors/nvim) in headless Neovim, against the built `coffer`.

Usage: nvim_check.py COFFER_BINARY

1. One Neovim with a server of its own (`coffer rpc`): Editors/nvim/test/check.lua's `single`
   scenario (buffers, conflicts, encodings, folder buffers, find, changes by others, a server
   that dies).
2. Two Neovims on one `coffer rpc --listen unix:PATH`: a save in one reloads the other's buffer.
"""
import owned  # every process this check starts is ended with it (.ci/owned.py)
import os
import subprocess
import sys
import tempfile
import time

import shutil

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# A copy of Editors/nvim, so that `:helptags` writes its tags file there, not in the checkout.
PLUGIN = os.path.join(tempfile.mkdtemp(prefix="coffer-nvim-plugin-"), "coffer")
shutil.copytree(os.path.join(ROOT, "Editors", "nvim"), PLUGIN)


def nvim(environment, timeout=120):
    """Starts a headless Neovim that loads the plugin from the checkout and runs the check."""
    command = ["nvim", "--headless", "-u", "NONE", "-i", "NONE", "--cmd", f"set rtp^={PLUGIN}",
               "--cmd", f"runtime plugin/coffer.lua", "-c", f"luafile {PLUGIN}/test/check.lua"]
    return subprocess.Popen(command, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def finish(process, label, timeout=120):
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        output, _ = process.communicate(timeout=60)
        print(output)
        sys.exit(f"nvim_check: FAILED: {label} did not finish within {timeout} s")
    print(output, end="")
    if process.returncode != 0:
        sys.exit(f"nvim_check: FAILED: {label} exited with {process.returncode}")


def main():
    binary = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="coffer-nvim-")
    base = dict(os.environ, COFFER_BIN=binary, COFFER_PLUGIN=PLUGIN, LANG="C.UTF-8", HOME=work, XDG_DATA_HOME=os.path.join(work, "data"))
    base.pop("LC_ALL", None)

    container = os.path.join(work, "single")
    host = os.path.join(work, "host")
    os.makedirs(host)
    subprocess.run([binary, "--container", container, "-c", "pwd"], check=True, stdout=subprocess.DEVNULL)
    finish(nvim(dict(base, COFFER_CONTAINER=container, COFFER_SCENARIO="single", COFFER_HOST=host)), "the single scenario")

    shared = os.path.join(work, "shared")
    subprocess.run([binary, "--container", shared, "-c", "pwd"], check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(shared, "Documents", "UserFiles", "shared.md"), "w") as file:
        file.write("v1\n")
    socket = os.path.join(work, "coffer.sock")
    server = subprocess.Popen([binary, "--container", shared, "rpc", "--listen", f"unix:{socket}"])
    try:
        for _ in range(100):
            if os.path.exists(socket):
                break
            time.sleep(0.05)
        ready = os.path.join(work, "reader-ready")
        both = dict(base, COFFER_CONTAINER=shared, COFFER_SOCKET=socket, COFFER_READY=ready)
        reader = nvim(dict(both, COFFER_SCENARIO="reader"))
        writer = nvim(dict(both, COFFER_SCENARIO="writer"))
        finish(writer, "the writing Neovim")
        finish(reader, "the reading Neovim")
    finally:
        server.terminate()
        server.wait(timeout=10)
    print("nvim_check: every scenario held")


if __name__ == "__main__":
    main()
