// Text of one ACP ContentBlock as the transcript shows it. Images and audio
// are named, not loaded: the view fetches nothing a message points at.
import type { ContentBlock } from "@agentclientprotocol/sdk";

export function contentText(content: ContentBlock): string {
  switch (content.type) {
    case "text":
      return content.text;
    case "resource_link":
      return `[${content.title ?? content.name}](${content.uri})`;
    case "resource":
      return "text" in content.resource ? content.resource.text : `[${content.resource.uri}]`;
    case "image":
      return `[image ${content.mimeType}]`;
    case "audio":
      return `[audio ${content.mimeType}]`;
    default:
      return "";
  }
}
