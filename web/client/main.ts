// Entry of the web client bundle (dist/web/client/app-[hash].js and .css).
import "../session-view/session-view.css";
import "./app.css";
import { startApp } from "./app.ts";

startApp(document.getElementById("app")!);
