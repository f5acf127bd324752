// Every built-in tool, for the server to register. tool_search is not listed: the catalog adds
// it whenever deferred tools exist. A new built-in adds one line here.
import type { Tool } from "../tool";
import { applyPatchTool } from "./apply_patch";
import { askUserTool } from "./ask_user";
import { todoWriteTool } from "./todo_write";
import { editFileTool } from "./edit_file";
import { exitPlanModeTool } from "./exit_plan_mode";
import { fetchUrlTool } from "./fetch_url";
import { gitDiffTool } from "./git_diff";
import { gitPushTool } from "./git_push";
import { globTool } from "./glob";
import { listFilesTool } from "./list_files";
import { readFileTool } from "./read_file";
import { searchTextTool } from "./search_text";
import { shellTool } from "./shell";
import { taskTool } from "./task";
import { toolProgramTool } from "./tool_program";
import { writeFileTool } from "./write_file";
import { runCheckTool } from "./run_check";
import { toolTransactionTool } from "./tool_transaction";

export function builtinTools(): Tool[] {
  return [
    applyPatchTool,
    askUserTool,
    todoWriteTool,
    editFileTool,
    fetchUrlTool,
    gitDiffTool,
    gitPushTool,
    globTool,
    listFilesTool,
    readFileTool,
    searchTextTool,
    shellTool,
    taskTool,
    toolProgramTool,
    writeFileTool,
    exitPlanModeTool,
    runCheckTool,
    toolTransactionTool,
  ];
}
