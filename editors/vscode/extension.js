// The Vox extension: the TextMate grammar highlights; this starts
// `cargo vox lsp` (or the configured command) as the language server.
"use strict";

const vscode = require("vscode");
const { LanguageClient, TransportKind } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const config = vscode.workspace.getConfiguration("vox");
  const command = config.get("server.command", "cargo");
  const args = config.get("server.args", ["vox", "lsp"]);
  const folder = vscode.workspace.workspaceFolders && vscode.workspace.workspaceFolders[0];
  const run = {
    command,
    args,
    transport: TransportKind.stdio,
    options: folder ? { cwd: folder.uri.fsPath } : {},
  };
  client = new LanguageClient(
    "vox",
    "Vox",
    { run, debug: run },
    {
      documentSelector: [{ scheme: "file", language: "vox" }],
      synchronize: {
        fileEvents: vscode.workspace.createFileSystemWatcher("**/*.vox"),
      },
    }
  );
  context.subscriptions.push({ dispose: () => client && client.stop() });
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
