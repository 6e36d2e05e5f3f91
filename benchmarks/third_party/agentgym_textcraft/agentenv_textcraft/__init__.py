from .server import app
from .launch import launch
from .environment import TextCraftEnv
from .crafting_tree import CraftingTree
from .utils import item_id_to_str
