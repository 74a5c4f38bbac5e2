// demo.reader: the demo's reader card. `arrowgate demo` plays its side: it
// reads shell's screen and gets shell's exit code on its `code` port
// (engine/app/demo.py).
