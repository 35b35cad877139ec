"""The scheduled monitor dispatcher (E8): each due run claimed once and started; alerts left
pending delivered."""

from evalsvc.handlers.background import dispatch_handler

handler = dispatch_handler
