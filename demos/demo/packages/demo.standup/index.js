// demo.standup: the demo's stand-up card. arrowgate never runs a card's code
// (the canvas app does); `arrowgate demo` plays this card's side itself: it
// prompts claude, codex and yolo, runs a command in shell and answers the
// summarize_standup tool call (engine/app/demo.py).
